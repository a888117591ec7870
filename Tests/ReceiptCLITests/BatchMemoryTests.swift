import Foundation
import Testing

/// Batch verification holds a bounded window of files in flight and lines not yet written, so its memory does not
/// grow with the number of receipts (measured as the child's peak resident size).
@Suite("Batch verification memory")
struct BatchMemoryTests {
    /// Peak memory and output lines of verifying a directory holding `count` copies of one receipt.
    func verifyDirectory(_ runner: CLIRunner, copies count: Int, of receipt: [UInt8]) throws -> (Int, Int) {
        let directory = "receipts-\(count)"
        try FileManager.default.createDirectory(atPath: runner.path(directory), withIntermediateDirectories: true)
        for index in 0..<count {
            try Data(receipt).write(to: runner.directory.appendingPathComponent("\(directory)/\(index).der"))
        }
        let result = try PeakMemory.run(
            CLIRunner.executable, ["verify", runner.path(directory), "--trust", runner.path("dev/root-ca.pem")],
            in: runner.directory)
        #expect(result.status == 0)
        let lines = result.standardOutput.split(separator: "\n")
        return (result.peakBytes, lines.filter { $0.contains(": valid: ") }.count)
    }

    @Test("ten times as many receipts take no more memory beyond a few MiB")
    func memoryIsFlat() throws {
        let runner = try CLIRunner()
        let receipt = try runner.signValidReceipt()
        let (fewPeak, fewLines) = try verifyDirectory(runner, copies: 600, of: receipt)
        let (manyPeak, manyLines) = try verifyDirectory(runner, copies: 6000, of: receipt)
        #expect(fewLines == 600)
        #expect(manyLines == 6000)
        #expect(manyPeak - fewPeak < 8 << 20, "600 files: \(fewPeak >> 20) MiB, 6000 files: \(manyPeak >> 20) MiB")
    }
}
