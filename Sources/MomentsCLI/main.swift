import MomentsCommandLine

Interrupts.installOnce()
Interrupts.exit(withStatus: await MomentsCommandLine.run(Array(CommandLine.arguments.dropFirst())))
