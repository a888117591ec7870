import Foundation
import Testing

/// What `receipt verify DIR` writes: a line per file in input order across many windows of the pipeline, and a
/// standard output that fails is a file error, not a crash.
@Suite("receipt verify over a directory: output")
struct BatchOutputTests {
    @Test("over more files than the pipeline holds at once, each line is its file's, in order, with its outcome")
    func orderAcrossWindows() throws {
        let (runner, receipt) = try BatchTests().runnerWithReceipt()
        try FileManager.default.createDirectory(atPath: runner.path("many"), withIntermediateDirectories: true)
        let names = (0..<1500).map { String(format: "%04d.der", $0) }
        for (index, name) in names.enumerated() {
            let content = index % 7 == 3 ? Array("not a receipt".utf8) : receipt
            try Data(content).write(to: URL(fileURLWithPath: runner.path("many/\(name)")))
        }
        let result = try runner.run(["verify", "many", "--trust", "dev/root-ca.pem"])
        let lines = result.output.split(separator: "\n")
        #expect(lines.count == names.count)
        for (index, line) in lines.enumerated() {
            let outcome = index % 7 == 3 ? "invalid" : "valid"
            #expect(line.hasPrefix("many/\(names[index]): \(outcome)"), "line \(index): \(line)")
        }
        #expect(result.status == 1)
        #expect(result.standardError.contains("1500 files, 1286 valid, 214 invalid, 0 unreadable, 0 skipped"))
    }

    @Test("standard input named twice in a batch is a usage error (exit 2), since files are read side by side")
    func standardInputTwice() throws {
        let runner = try CLIRunner()
        try runner.write("a.der", "not a receipt")
        let anchor = CLIRunner.packageRoot.appendingPathComponent("certs/apple/AppleIncRootCertificate.cer").path
        let result = try runner.run(
            ["verify", "-", "a.der", "-", "--trust", anchor], input: Array("not a receipt".utf8))
        #expect(result.status == 2)
        #expect(result.standardError.contains("standard input (-) can be named only once"))
        #expect(result.standardOutput.isEmpty)
    }

    @Test("a standard output that cannot be written is a file error (exit 3) that says so")
    func fullOutput() throws {
        let runner = try CLIRunner()
        try runner.write("a.der", "not a receipt")
        try runner.write("b.der", "not a receipt either")
        let anchor = CLIRunner.packageRoot.appendingPathComponent("certs/apple/AppleIncRootCertificate.cer").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = [
            "-c", "exec \"$0\" verify a.der b.der --trust \"$1\" > /dev/full 2> errors.txt",
            CLIRunner.executable.path, anchor,
        ]
        process.currentDirectoryURL = runner.directory
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 3)
        let errors = String(decoding: try runner.read("errors.txt"), as: UTF8.self)
        #expect(errors.contains("cannot write standard output: No space left on device"), "\(errors)")
    }
}
