// libpq, the PostgreSQL client library (Debian: libpq-dev; pkg-config: libpq).
#ifndef MOMENTS_CPOSTGRES_SHIM_H
#define MOMENTS_CPOSTGRES_SHIM_H

#include <libpq-fe.h>

#endif
