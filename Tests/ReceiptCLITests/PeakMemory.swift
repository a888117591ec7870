import Foundation

/// Runs a program as a child process and reports its exit status and peak resident memory, as the kernel
/// accounts it. Memory, unlike time, does not depend on what else the machine is doing.
///
/// The program runs under GNU `time` (`.ci/setup --tests` installs it): Linux keeps `ru_maxrss` across `execve`, so
/// a direct child of this (large) test process would report the test's own size; `time` is small, and the process
/// it forks reports only its own peak.
enum PeakMemory {
    struct Measurement {
        let status: Int32
        /// Peak resident set size, in bytes.
        let peakBytes: Int
        let standardOutput: String
    }

    /// Runs `program` with `arguments` (give absolute paths); its output is collected in `directory`.
    static func run(_ program: URL, _ arguments: [String], in directory: URL) throws -> Measurement {
        let outputFile = directory.appendingPathComponent("peak-memory-\(UUID().uuidString).out")
        let peakFile = directory.appendingPathComponent("peak-memory-\(UUID().uuidString).kb")
        defer {
            try? FileManager.default.removeItem(at: outputFile)
            try? FileManager.default.removeItem(at: peakFile)
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/time")
        process.arguments = ["-f", "%M", "-o", peakFile.path, program.path] + arguments
        process.standardInput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard FileManager.default.createFile(atPath: outputFile.path, contents: nil) else {
            throw PeakMemoryError("cannot create \(outputFile.path) for the program's output")
        }
        let output = try FileHandle(forWritingTo: outputFile)
        process.standardOutput = output
        try process.run()
        process.waitUntilExit()
        try output.close()
        let kilobytes = (try? String(contentsOf: peakFile, encoding: .utf8))?
            .split(separator: "\n").last.flatMap { Int($0) }
        guard let kilobytes else {
            throw PeakMemoryError("GNU time did not report a peak; is /usr/bin/time installed?")
        }
        return Measurement(
            status: process.terminationStatus, peakBytes: kilobytes * 1024,
            standardOutput: (try? String(contentsOf: outputFile, encoding: .utf8)) ?? "")
    }
}

struct PeakMemoryError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
