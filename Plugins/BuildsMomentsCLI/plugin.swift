import PackagePlugin

/// Makes building the `moments` launcher (MomentsLauncher) build the command-line
/// program it starts: a plugin's tool is built, beside the launcher, before the target
/// that uses the plugin. No command is needed; the launcher finds the program at run
/// time, next to itself.
@main
struct BuildsMomentsCLI: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        _ = try context.tool(named: "MomentsCLI")
        return []
    }
}
