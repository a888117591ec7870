import Glibc

exit(CommandLineInterface.run(Array(CommandLine.arguments.dropFirst())).rawValue)
