import MomentsCommandLine

let arguments = Array(CommandLine.arguments.dropFirst())
Interrupts.installOnce(stoppingGracefully: MomentsCommandLine.stopsGracefully(arguments))
Interrupts.exit(withStatus: await MomentsCommandLine.run(arguments))
