import Foundation
import Testing

/// Writing the result is part of the command: output that cannot be written ends the process with a file error
/// (status 3), saying why, rather than as if all was written.
@Suite("Standard output that cannot be written")
struct StandardOutputTests {
    @Test("a full standard output ends the process with status 3, naming why on standard error")
    func fullOutput() throws {
        let process = Process()
        process.executableURL = CLIRunner.executable
        process.arguments = ["--version"]
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: "/dev/full"))
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 3)
        #expect(message == "receipt: cannot write standard output: No space left on device\n")
    }
}
