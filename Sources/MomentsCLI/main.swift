import MomentsCStartup
import MomentsCommandLine

let arguments = Array(CommandLine.arguments.dropFirst())
// SIGINT and SIGTERM have been blocked since the process began (MomentsCStartup):
// handled from here on, an interrupt that came while it started included.
Interrupts.installOnce(stoppingGracefully: MomentsCommandLine.stopsGracefully(arguments),
                       releasingStartupBlock: { moments_startup_unblock_interrupts() })
Interrupts.exit(withStatus: await MomentsCommandLine.run(arguments))
