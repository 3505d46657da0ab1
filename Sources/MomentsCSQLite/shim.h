#ifndef MOMENTS_CSQLITE_SHIM_H
#define MOMENTS_CSQLITE_SHIM_H

#include <sqlite3.h>

/// `SQLITE_TRANSIENT` is a macro over a pointer cast that Swift cannot import.
static inline sqlite3_destructor_type moments_sqlite_transient(void) {
    return SQLITE_TRANSIENT;
}

#endif
