import Foundation

/// Reading inputs and writing outputs without ever leaving a partial file behind.
enum Files {
    /// Reads a file, or standard input for `-`, up to `limit` bytes plus one (so that an oversized input is
    /// recognised without reading all of it).
    static func read(_ path: String, limit: Int = Int.max - 1) throws(CommandFailure) -> [UInt8] {
        let handle: FileHandle
        if path == "-" {
            handle = FileHandle.standardInput
        } else {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                throw .io("cannot read \(path): no such file")
            }
            guard !isDirectory.boolValue else { throw .io("cannot read \(path): it is a directory") }
            guard let opened = FileHandle(forReadingAtPath: path) else {
                throw .io("cannot read \(path): permission denied")
            }
            handle = opened
        }
        defer { if path != "-" { try? handle.close() } }
        var bytes: [UInt8] = []
        do {
            while bytes.count <= limit {
                guard let chunk = try handle.read(upToCount: min(1 << 20, limit + 1 - bytes.count)), !chunk.isEmpty
                else {
                    break
                }
                bytes.append(contentsOf: chunk)
            }
        } catch {
            throw .io("cannot read \(path == "-" ? "standard input" : path): \(error.localizedDescription)")
        }
        return bytes
    }

    /// Writes `bytes` to `path` through a temporary file in the same directory and a rename, so the path holds
    /// either its old content or the complete new content. With `replace == false` an existing file is an error
    /// and is left untouched.
    static func write(_ bytes: [UInt8], to path: String, mode: mode_t = 0o644, replace: Bool = true)
        throws(CommandFailure)
    {
        let url = URL(fileURLWithPath: path)
        let temporary = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp")
            .path
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw .io("cannot write \(path): \(String(cString: strerror(errno)))") }
        var failure: String?
        var offset = 0
        while offset < bytes.count && failure == nil {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 && errno != EINTR { failure = String(cString: strerror(errno)) }
            if written > 0 { offset += written }
        }
        if failure == nil && fsync(descriptor) != 0 { failure = String(cString: strerror(errno)) }
        if close(descriptor) != 0 && failure == nil { failure = String(cString: strerror(errno)) }
        if failure == nil {
            if replace {
                if rename(temporary, path) != 0 { failure = String(cString: strerror(errno)) }
            } else if link(temporary, path) != 0 {
                failure = errno == EEXIST ? "the file already exists (not replaced)" : String(cString: strerror(errno))
            }
        }
        unlink(temporary)
        if let failure { throw .io("cannot write \(path): \(failure)") }
    }

    /// Writes to standard output.
    static func writeStandardOutput(_ bytes: [UInt8]) {
        FileHandle.standardOutput.write(Data(bytes))
    }

    static func printError(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

}
