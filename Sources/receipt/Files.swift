import CReceiptFileReading
import Glibc
import Synchronization
import Threads

/// Reading inputs and writing outputs without ever leaving a partial file behind.
enum Files {
    /// Reads a file, or standard input for `-`, up to `limit` bytes plus one (so that an oversized input is
    /// recognised without reading all of it). A regular file is read as large as it was when opened: one open,
    /// one fstat, one read and one close, unless its size changes meanwhile.
    static func read(_ path: String, limit: Int = Int.max - 1) throws(CommandFailure) -> [UInt8] {
        guard path != "-" else { return try read(STDIN_FILENO, named: "standard input", limit: limit) }
        let descriptor = openForReading(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .io("cannot read \(path): \(openFailure(path))") }
        defer { close(descriptor) }
        return try read(descriptor, named: path, limit: limit)
    }

    /// Reads a file that a directory's listing found to be a regular file, up to `limit` bytes plus one as
    /// ``read(_:limit:)`` does, in fewer system calls: one open, one read and one close for a file under 64 KiB,
    /// and no fstat. A read that returns less than it asked for is taken as the end, as it is for a regular file;
    /// one of 64 KiB or more is read as it grows (no more than 1 GiB asked at once, under the 2 GiB less a page that
    /// Linux returns at most). The file is opened as the listing saw it: a symbolic link put in its place is not
    /// followed, and a FIFO does not block (one put in its place is read as far as its first short read). It is
    /// opened by its name in the listed directory's descriptor where the listing kept one. Its bytes are read from
    /// memory where they are, and where they are not the calling thread keeps its CPU while the disk works
    /// (``readKeepingTheCPU(_:into:at:fromDisk:)``); `fromDisk` is set when some had to be read from the disk.
    static func readListedFile(
        _ file: Batch.Listing.ListedFile, limit: Int, fromDisk: inout Bool
    ) throws(CommandFailure) -> [UInt8] {
        let descriptor = openForReading(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard descriptor >= 0 else {
            let reason =
                errno == ELOOP ? "it is a symbolic link (not followed in a directory)" : openFailure(file)
            throw .io("cannot read \(file.path): \(reason)")
        }
        defer { close(descriptor) }
        return try read(descriptor, named: file.path, limit: limit, size: nil, as: .listed, fromDisk: &fromDisk)
    }

    /// Asks Linux to start reading the first `bytes` bytes of a file that a directory's listing found into memory,
    /// and returns without waiting for them (posix_fadvise WILLNEED on a descriptor opened for it and closed): for
    /// ``ReadAhead``. Opens as ``readListedFile(_:limit:)`` does; what cannot be opened is passed over, for the read
    /// that follows to report.
    static func startReading(_ file: Batch.Listing.ListedFile, bytes: Int) {
        let descriptor = openForReading(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard descriptor >= 0 else { return }
        posix_fadvise(descriptor, 0, off_t(clamping: bytes), POSIX_FADV_WILLNEED)
        close(descriptor)
    }

    /// Linux's O_NOATIME, which the Glibc module does not export (it needs _GNU_SOURCE): the value of every
    /// architecture Swift runs on under Linux.
    private static let withoutAccessTime: Int32 = 0o1_000_000

    /// Whether opening with O_NOATIME has been refused once (EPERM: the file is another user's and the process may
    /// not override that), after which files are opened without it.
    private static let accessTimeRequired = Atomic(false)

    /// Opens `path` for reading as ``openForReading(at:_:_:)`` does.
    private static func openForReading(_ path: String, _ flags: Int32) -> Int32 {
        path.withCString { openForReading(at: AT_FDCWD, $0, flags) }
    }

    /// Opens a file a directory's listing found where ``withLocation(of:_:)`` says, as ``openForReading(at:_:_:)``
    /// does.
    private static func openForReading(_ file: Batch.Listing.ListedFile, _ flags: Int32) -> Int32 {
        withLocation(of: file) { openForReading(at: $0, $1, flags) }
    }

    /// Calls `body` with where a file a directory's listing found is: the listed directory's descriptor and the
    /// file's name in it, or AT_FDCWD and its path where the listing kept no descriptor.
    private static func withLocation<Result>(
        of file: Batch.Listing.ListedFile, _ body: (Int32, UnsafePointer<CChar>) -> Result
    ) -> Result {
        file.path.withCString { path in body(file.directory, path + Int(file.nameOffset)) }
    }

    /// Opens `name` (in the directory `directory` refers to, or the working directory's AT_FDCWD) with `flags` and
    /// O_NOATIME, so that reading it writes nothing back to the file system. Else the first read of a file written
    /// since it was last read updates its access time (Linux's relatime), an inode written and journaled for every
    /// file of a fresh batch: on ext4, opening, reading and closing such a file took 5.7 microseconds instead of
    /// 3.4, and a batch of 2,000 fresh files ran 1.4 ms (4 %) longer. Where O_NOATIME is refused, opens as asked.
    private static func openForReading(at directory: Int32, _ name: UnsafePointer<CChar>, _ flags: Int32) -> Int32 {
        if !accessTimeRequired.load(ordering: .relaxed) {
            let descriptor = openat(directory, name, flags | withoutAccessTime)
            guard descriptor < 0 && errno == EPERM else { return descriptor }
            accessTimeRequired.store(true, ordering: .relaxed)
        }
        return openat(directory, name, flags)
    }

    /// Why `path` could not be opened for reading, as ``openFailure(at:_:)`` says.
    private static func openFailure(_ path: String) -> String {
        path.withCString { openFailure(at: AT_FDCWD, $0) }
    }

    /// Why a file a directory's listing found could not be opened, looked up where it was opened
    /// (``withLocation(of:_:)``), not at a path that may lead elsewhere since.
    private static func openFailure(_ file: Batch.Listing.ListedFile) -> String {
        withLocation(of: file) { openFailure(at: $0, $1) }
    }

    /// Why `name` (in the directory `directory` refers to, or the working directory's AT_FDCWD) could not be opened
    /// for reading, in the words `read` has always used.
    private static func openFailure(at directory: Int32, _ name: UnsafePointer<CChar>) -> String {
        var status = stat()
        guard fstatat(directory, name, &status, 0) == 0 else { return "no such file" }
        return status.st_mode & S_IFMT == S_IFDIR ? "it is a directory" : "permission denied"
    }

    /// Reads `descriptor` to `limit` bytes plus one, and short of that: a regular file to the size fstat gives it
    /// (or its end, if it shrank), anything else to its end.
    private static func read(_ descriptor: Int32, named name: String, limit: Int) throws(CommandFailure) -> [UInt8] {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw .io("cannot read \(name): \(lastError)") }
        guard status.st_mode & S_IFMT != S_IFDIR else { throw .io("cannot read \(name): it is a directory") }
        let size = status.st_mode & S_IFMT == S_IFREG && status.st_size > 0 ? Int(status.st_size) : nil
        var fromDisk = false
        return try read(descriptor, named: name, limit: limit, size: size, fromDisk: &fromDisk)
    }

    /// How ``read(_:named:limit:size:as:fromDisk:)`` reads: each read(2) to its end, or a listed file's way.
    private enum Reading {
        /// read(2), until it returns nothing.
        case whole
        /// ``readKeepingTheCPU(_:into:at:fromDisk:)``, until it returns less than it was asked for.
        case listed
    }

    /// Reads `descriptor` to `limit` bytes plus one, and short of that to `size` bytes when it is known, else to
    /// its end, as `reading` says. Room is made for `size` bytes, or 64 KiB, and doubled when filled; it is not
    /// filled with zeros first. Sets `fromDisk` when a read waited for the disk (listed files only).
    private static func read(
        _ descriptor: Int32, named name: String, limit: Int, size: Int?, as reading: Reading = .whole,
        fromDisk: inout Bool
    ) throws(CommandFailure) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(min(size ?? 1 << 16 - 1, limit) + 1)
        while bytes.count <= limit && bytes.count != size {
            // The room left, else as much again (at least 64 KiB); never past the limit's extra byte, nor 1 GiB.
            let room = bytes.capacity > bytes.count ? bytes.capacity - bytes.count : max(bytes.count, 1 << 16)
            let asked = min(room, limit + 1 - bytes.count, 1 << 30)
            let offset = bytes.count
            var count = 0
            var failure: Int32 = 0
            bytes.append(addingCapacity: asked) { output in
                output.withUnsafeMutableBufferPointer { buffer, initialized in
                    switch reading {
                    case .whole: count = Glibc.read(descriptor, buffer.baseAddress, buffer.count)
                    case .listed: count = readKeepingTheCPU(descriptor, into: buffer, at: offset, fromDisk: &fromDisk)
                    }
                    if count < 0 { failure = errno }
                    initialized = max(count, 0)
                }
            }
            if count == 0 || (reading == .listed && count > 0 && count < asked) { break }
            if count < 0 && failure != EINTR {
                throw .io("cannot read \(name): \(errorText(failure))")
            }
        }
        return bytes
    }

    /// One read(2) of a listed file, at `offset` in it, that keeps the calling thread's CPU while the disk works,
    /// and returns less than `buffer` holds only at the file's end (or, for a FIFO put in its place, when it has no
    /// more for now). It reads what is in memory (``receipt_read_from_memory``); what is not, Linux starts reading
    /// and the thread yields its CPU to any other and looks again, ``diskWait`` at most before waiting as read(2)
    /// does; then `fromDisk` is set. A thread that waits leaves its CPU idle, and on a virtual machine a CPU that
    /// idles comes back slowly: with 10 of 2,000 files dropped from the page cache before each run (Intel Xeon,
    /// reading ahead left out, medians of 25 runs), a batch whose workers waited in read(2) took 40.4 ms, one whose
    /// workers looked again 36.5, as long as with every file in memory. Where the file system cannot read without
    /// waiting, every read is read(2)'s.
    private static func readKeepingTheCPU(
        _ descriptor: Int32, into buffer: UnsafeMutableBufferPointer<UInt8>, at offset: Int, fromDisk: inout Bool
    ) -> Int {
        guard !memoryReadsRefused.load(ordering: .relaxed) else {
            return Glibc.read(descriptor, buffer.baseAddress, buffer.count)
        }
        var total = 0
        while total < buffer.count {
            let rest = UnsafeMutableBufferPointer(rebasing: buffer[total...])
            var count = receipt_read_from_memory(descriptor, rest.baseAddress, rest.count)
            if count < 0 && errno == EOPNOTSUPP {
                memoryReadsRefused.store(true, ordering: .relaxed)
                count = Glibc.read(descriptor, rest.baseAddress, rest.count)
            } else if count < 0 && errno == EAGAIN {
                fromDisk = true
                let deadline = Deadline(after: diskWait)
                repeat {
                    sched_yield()
                    count = receipt_read_from_memory(descriptor, rest.baseAddress, rest.count)
                } while count < 0 && errno == EAGAIN && Deadline.now < deadline
                if count < 0 && errno == EAGAIN { count = Glibc.read(descriptor, rest.baseAddress, rest.count) }
                // A regular file's read(2) never says EAGAIN: a FIFO with nothing more for now.
                if count < 0 && errno == EAGAIN && total > 0 { return total }
            }
            if count < 0 && errno == EINTR { continue }
            if count < 0 { return count }
            if count == 0 { break }
            total += count
            // Reading from memory stops at a page whose bytes are not there yet, and a file's end can fall anywhere:
            // less than asked that ends inside a page is the end.
            if (offset + total) % pageSize != 0 { break }
        }
        return total
    }

    /// How long a read of a listed file looks again for bytes Linux is reading before it waits as read(2) does:
    /// longer than a file's read takes from a local disk (0.05-0.1 ms here), short enough that a slow one costs
    /// little CPU before ``ReadAhead`` takes over.
    private static var diskWait: Duration { .milliseconds(1) }

    /// Whether the file system refused a read from memory only (EOPNOTSUPP), after which listed files are read as
    /// read(2) does.
    private static let memoryReadsRefused = Atomic(false)

    private static let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))

    /// Writes `bytes` to `path` through a temporary file in the same directory and a rename, so the path holds
    /// either its old content or the complete new content. With `replace == false` an existing file is an error
    /// and is left untouched.
    static func write(_ bytes: [UInt8], to path: String, mode: mode_t = 0o644, replace: Bool = true)
        throws(CommandFailure)
    {
        let slash = path.lastIndex(of: "/").map { path.index(after: $0) } ?? path.startIndex
        let temporary = "\(path[..<slash]).\(path[slash...]).\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw .io("cannot write \(path): \(lastError)") }
        var failure = write(bytes, to: descriptor)
        if failure == nil && fsync(descriptor) != 0 { failure = lastError }
        if close(descriptor) != 0 && failure == nil { failure = lastError }
        if failure == nil {
            if replace {
                if rename(temporary, path) != 0 { failure = lastError }
            } else if link(temporary, path) != 0 {
                failure = errno == EEXIST ? "the file already exists (not replaced)" : lastError
            }
        }
        unlink(temporary)
        if let failure { throw .io("cannot write \(path): \(failure)") }
    }

    /// `name` in `directory`.
    static func path(_ name: String, in directory: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }

    /// Whether there is something at `path`: a file, a directory, or a symbolic link to one.
    static func exists(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0
    }

    /// Makes the directory `path` and the ones above it that are missing, as `mkdir -p` does. Nil when the directory
    /// is there afterwards; otherwise why not (strerror's words).
    static func makeDirectories(_ path: String) -> String? {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/") {
            prefix += component
            if mkdir(prefix, 0o777) != 0 && errno != EEXIST { return lastError }
            prefix += "/"
        }
        var status = stat()
        guard stat(path, &status) == 0 else { return lastError }
        return status.st_mode & S_IFMT == S_IFDIR ? nil : String(cString: strerror(ENOTDIR))
    }

    /// Writes all of `bytes` to standard output; when that fails (a closed descriptor, a full disk) says so on
    /// standard error and ends the process with the status of a file error (3): what could not be written is
    /// part of the command's result, so the command cannot succeed.
    static func writeStandardOutput(_ bytes: [UInt8]) {
        writeOrStop(bytes, to: STDOUT_FILENO, named: "standard output")
    }

    /// Writes all of `bytes` to standard output in as few write(2) calls as the kernel takes them in; a failure (a
    /// full disk) is an error, where ``writeStandardOutput(_:)`` stops the process.
    static func writeAllToStandardOutput(_ bytes: [UInt8]) throws(CommandFailure) {
        if let failure = write(bytes, to: STDOUT_FILENO) { throw .io("cannot write standard output: \(failure)") }
    }

    /// Writes all of `bytes` to `descriptor`; nil once written, else why not (strerror's words).
    private static func write(_ bytes: [UInt8], to descriptor: Int32) -> String? {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 && errno != EINTR { return lastError }
            if written > 0 { offset += written }
        }
        return nil
    }

    /// What `errno` says, in strerror's words.
    private static var lastError: String { errorText(errno) }

    /// What the error number `code` means, in strerror's words.
    private static func errorText(_ code: Int32) -> String { String(cString: strerror(code)) }

    /// Writes `text` and a line feed to standard error; ends the process as ``writeStandardOutput(_:)`` does when
    /// that fails.
    static func printError(_ text: String) {
        writeStandardError(text + "\n")
    }

    /// Writes `text` to standard error; ends the process as ``writeStandardOutput(_:)`` does when that fails.
    static func writeStandardError(_ text: String) {
        writeOrStop(Array(text.utf8), to: STDERR_FILENO, named: "standard error")
    }

    /// Writes all of `bytes` to `descriptor`, or says why not on standard error (if it can) and ends the process
    /// with the status of a file error.
    private static func writeOrStop(_ bytes: [UInt8], to descriptor: Int32, named name: String) {
        guard let failure = write(bytes, to: descriptor) else { return }
        _ = write(Array("receipt: cannot write \(name): \(failure)\n".utf8), to: STDERR_FILENO)
        exit(ExitCode.inputOutput.rawValue)
    }
}
