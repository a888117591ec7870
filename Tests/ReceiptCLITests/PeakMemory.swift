import Foundation

/// Runs a program as a child process and reports its exit status and peak resident memory, as the kernel
/// accounts it (`wait4`'s `ru_maxrss`). Memory, unlike time, does not depend on what else the machine is doing.
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
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputFile.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv = ([program.path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, program.path, &actions, nil, argv, environ)
        guard spawned == 0 else { throw POSIXError(POSIXErrorCode(rawValue: spawned) ?? .EIO) }
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
        let output = (try? String(contentsOf: outputFile, encoding: .utf8)) ?? ""
        try? FileManager.default.removeItem(at: outputFile)
        let exitStatus = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        return Measurement(status: exitStatus, peakBytes: usage.ru_maxrss * 1024, standardOutput: output)
    }
}
