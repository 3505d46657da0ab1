import Foundation
import MomentsCommandLine

exit(await MomentsCommandLine.run(Array(CommandLine.arguments.dropFirst())))
