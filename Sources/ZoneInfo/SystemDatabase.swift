internal import Glibc

/// Where the system's compiled time-zone database is, which names may be looked up in it, and reading one file of
/// it whole within a size limit.
enum SystemDatabase {
    static let defaultDirectory = "/usr/share/zoneinfo"

    /// `$TZDIR` when set and not empty, else ``defaultDirectory``.
    static var directory: String {
        guard let value = getenv("TZDIR"), value.pointee != 0 else { return defaultDirectory }
        return String(cString: value)
    }

    /// Refuses names that are empty, longer than 255 bytes, absolute, with an empty, `.` or `..` component, or with a
    /// byte outside the database's portable file-name set (letters, digits, `/`, `_`, `-`, `+`, `.`).
    static func validate(_ name: String) throws(ZoneInfoError) {
        func refuse(_ rule: String) -> ZoneInfoError {
            ZoneInfoError(.invalidName, "time zone name \"\(name)\" \(rule)")
        }
        guard !name.isEmpty else { throw refuse("is empty") }
        guard name.utf8.count <= 255 else { throw refuse("is longer than 255 bytes") }
        guard !name.hasPrefix("/") else { throw refuse("is an absolute path; names are relative to the database") }
        guard name.utf8.allSatisfy(isNameByte) else {
            throw refuse("has a character other than letters, digits, '/', '_', '-', '+' and '.'")
        }
        for component in name.split(separator: "/", omittingEmptySubsequences: false) {
            guard !component.isEmpty else { throw refuse("has an empty component") }
            guard component != ".", component != ".." else { throw refuse("has a '\(component)' component") }
        }
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "/"), UInt8(ascii: "_"), UInt8(ascii: "-"),
            UInt8(ascii: "+"), UInt8(ascii: "."):
            true
        default: false
        }
    }

    /// The whole regular file at `path`, at most `limit` bytes: `notFound` when there is none (or it is a
    /// directory), `unreadable` when it cannot be opened or read, `tooLarge` when its size is past the limit (checked
    /// before anything is read).
    static func read(_ path: String, limit: Int) throws(ZoneInfoError) -> [UInt8] {
        var descriptor: Int32
        // Non-blocking so that a FIFO where a zone should be is refused instead of waited on.
        repeat {
            descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        } while descriptor < 0 && errno == EINTR
        guard descriptor >= 0 else {
            let code = errno
            switch code {
            case ENOENT, ENOTDIR: throw ZoneInfoError(.notFound, "no such file")
            default: throw ZoneInfoError(.unreadable, "cannot open: \(describe(code))")
            }
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw ZoneInfoError(.unreadable, "cannot stat: \(describe(errno))")
        }
        switch status.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR: throw ZoneInfoError(.notFound, "a directory, not a time zone")
        default: throw ZoneInfoError(.unreadable, "not a regular file")
        }
        guard status.st_size <= limit else {
            throw ZoneInfoError(.tooLarge, "\(status.st_size) bytes, more than \(limit)")
        }
        // One byte more than the size: a file that fills it grew while it was read.
        var bytes = [UInt8](repeating: 0, count: Int(status.st_size) + 1)
        var count = 0
        while count < bytes.count {
            let got = bytes.withUnsafeMutableBytes { buffer in
                Glibc.read(descriptor, buffer.baseAddress.map { $0 + count }, buffer.count - count)
            }
            if got < 0 {
                if errno == EINTR { continue }
                throw ZoneInfoError(.unreadable, "cannot read: \(describe(errno))")
            }
            if got == 0 { break }
            count += got
        }
        guard count < bytes.count else { throw ZoneInfoError(.unreadable, "the file grew while it was read") }
        bytes.removeSubrange(count...)
        return bytes
    }

    private static func describe(_ code: Int32) -> String {
        guard let text = strerror(code) else { return "errno \(code)" }
        return String(cString: text) + " (errno \(code))"
    }
}
