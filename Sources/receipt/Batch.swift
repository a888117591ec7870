import Glibc
import PurchaseVerifier
import ReceiptVerifier
import StrictJSON
import Threads

/// `receipt verify` over many files: worker threads on all cores (the calling thread one of them) each read, verify
/// and format one file at a time, and write the lines that are due in input order, one worker at a time
/// (``BatchPipeline``), with memory that does not grow with the number of files. A batch that verifies nothing fails.
enum Batch {
    /// Lines held at once per worker, in flight or waiting their turn to be written: room for the files after a
    /// slow one to go on while it is verified.
    static let windowPerWorker = 64

    /// Output gathered before one write(2).
    static let outputBuffer = 1 << 16

    /// How many files past the last one a worker took ``ReadAhead`` asks Linux to read. A disk's reads of small
    /// files overlap, and at about 0.1 ms each a worker verifies about six files while one is read: 2,000 receipts
    /// not in memory took 79 ms reading 16 files ahead, 62 with 64 and 57 with 256 (40 in memory).
    static let readAheadDistance = 128

    /// How much of each file ``ReadAhead`` asks for: all of a receipt of several hundred purchases (one of 1,000 is
    /// 288 KB), and with ``readAheadDistance`` at most 32 MiB ahead. A worker reads the rest of a larger file itself.
    static let readAheadBytesPerFile = 256 << 10

    /// How many of the last files a worker read (counted in windows of ``coldFilesWindow``) must have been out of
    /// memory for ``ReadAhead`` to start (``ColdReads``). A worker reading one that is not waits for the disk
    /// without letting its CPU idle (``Files/readListedFile(_:limit:fromDisk:)``), while reading ahead costs a batch
    /// a few microseconds for every file it opens a second time: in 2,000-file batches with a share of the files
    /// dropped from the page cache before each (Intel Xeon, medians of 25 alternating runs), reading ahead cost
    /// 1.3 ms with 0.5 % of them out, nothing either way with 3 %, and saved 3.1 ms with 10 %.
    static let coldFilesToReadAhead = 3

    /// The window, in files a worker read, in which ``coldFilesToReadAhead`` are counted.
    static let coldFilesWindow = 32

    /// How many listed directories keep a descriptor open for their files to be opened from (``Listing/ListedFile``):
    /// 256, and no more than a quarter of the process's limit of open files (1,024 by default), so that the workers
    /// and the rest of the process keep room for theirs (all in one table where Linux refuses each worker a table of
    /// its own); the files of any further directory are opened by their paths.
    static var keptDirectories: Int {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        return directoriesKept(underLimit: Int(clamping: limit.rlim_cur))
    }

    /// ``keptDirectories`` for a limit of `openFiles` open files.
    static func directoriesKept(underLimit openFiles: Int) -> Int {
        min(256, openFiles / 4)
    }

    /// What a batch will verify: the files in order, and what the listing passed over.
    struct Listing: Sendable {
        /// Files to verify, in order; `unreadableDirectory` entries are directories that could not be listed.
        var entries: [Entry] = []
        /// Subdirectories not entered (no `--recursive`).
        var skippedDirectories = 0
        /// Symbolic links met inside a directory (never followed), hidden files and special files.
        var skippedOther = 0
        /// The listed directories' descriptors that the entries' files are opened from, open as long as a copy of
        /// the listing is.
        var directories = Directories([])

        enum Entry: Sendable {
            /// A path named on the command line, read as it is: standard input (`-`), a FIFO, a symbolic link.
            case file(String)
            /// A regular file that listing a directory found, read as the listing saw it (``Files/readListedFile``).
            case listedFile(ListedFile)
            case unreadableDirectory(String, message: String)
        }

        /// A regular file a directory's listing found: its path, for output and messages, and where to open it from.
        /// Opened by its name in the listed directory's descriptor, it is the file of the directory that was listed
        /// even if a directory on its path has been renamed or replaced since, and Linux looks up one name instead
        /// of every component of the path: 0.6-0.9 ms less of a 2,000-file batch (150 alternating pairs).
        struct ListedFile: Sendable {
            let path: String
            /// The listed directory's descriptor, or AT_FDCWD where none was kept: `path` is then opened whole.
            let directory: Int32
            /// Where the file's name starts in `path`'s UTF-8 (0 with AT_FDCWD).
            let nameOffset: Int32
        }

        /// Descriptors of listed directories, closed when the last listing holding them is gone.
        final class Directories: Sendable {
            let descriptors: [Int32]

            init(_ descriptors: [Int32]) {
                self.descriptors = descriptors
            }

            deinit {
                for descriptor in descriptors { close(descriptor) }
            }
        }

        var skipped: Int { skippedDirectories + skippedOther }

        /// What was skipped, for the summary: "2 subdirectories not entered without --recursive; 1 hidden, …".
        var skippedDetail: String {
            var parts: [String] = []
            if skippedDirectories > 0 {
                let noun = skippedDirectories == 1 ? "subdirectory" : "subdirectories"
                parts.append("\(skippedDirectories) \(noun) not entered without --recursive")
            }
            if skippedOther > 0 {
                let noun = skippedOther == 1 ? "entry" : "entries"
                parts.append("\(skippedOther) hidden, special or symbolic-link \(noun)")
            }
            return parts.joined(separator: "; ")
        }
    }

    /// What the arguments ask to verify when they ask for a batch (several paths, or a directory), else nil.
    /// Directories are listed in name order; with `recursive`, subdirectories are entered where they sort,
    /// depth first. Symbolic links named on the command line are followed; links inside a directory never are.
    /// The first `directoryLimit` directories listed (``keptDirectories`` by default) keep a descriptor for their files
    /// to be opened from.
    static func listing(_ paths: [String], recursive: Bool, directoryLimit: Int = keptDirectories) -> Listing? {
        guard paths.count > 1 || (paths.count == 1 && isDirectory(paths[0])) else { return nil }
        var listing = Listing()
        var descriptors: [Int32] = []
        for path in paths {
            if isDirectory(path) {
                list(
                    directory: path, recursive: recursive, into: &listing, keeping: &descriptors,
                    upTo: directoryLimit)
            } else {
                listing.entries.append(.file(path))
            }
        }
        listing.directories = Listing.Directories(descriptors)
        return listing
    }

    /// Whether `path` is a directory, or a symbolic link to one.
    private static func isDirectory(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR
    }

    /// Lists `directory` into `listing` from the types that readdir reports, so that listing costs no system call
    /// per file (lstat only where the file system reports no type). Names that are not UTF-8 are skipped. While
    /// `descriptors` holds fewer than `limit`, a descriptor of the directory is added to it for its files.
    private static func list(
        directory: String, recursive: Bool, into listing: inout Listing, keeping descriptors: inout [Int32],
        upTo limit: Int
    ) {
        let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0, let stream = fdopendir(descriptor) else {
            if descriptor >= 0 { close(descriptor) }
            listing.entries.append(.unreadableDirectory(directory, message: "cannot list the directory"))
            return
        }
        var names: [(name: String, type: UInt8)] = []
        while let entry = readdir(stream) {
            let name = withUnsafePointer(to: &entry.pointee.d_name) { name in
                name.withMemoryRebound(to: CChar.self, capacity: MemoryLayout.size(ofValue: name.pointee)) {
                    String(validatingCString: $0)
                }
            }
            guard let name else {
                listing.skippedOther += 1
                continue
            }
            if name != "." && name != ".." { names.append((name, entry.pointee.d_type)) }
        }
        // A directory that may hold files keeps a duplicate of the stream's descriptor, which closes with it.
        let mayHoldFiles = names.contains { !$0.name.hasPrefix(".") && [DT_REG, DT_UNKNOWN].contains(Int($0.type)) }
        let kept = mayHoldFiles && descriptors.count < limit ? fcntl(descriptor, F_DUPFD_CLOEXEC, 0) : -1
        closedir(stream)
        if kept >= 0 { descriptors.append(kept) }
        let prefix = directory.hasSuffix("/") ? directory : directory + "/"
        let nameOffset = kept >= 0 ? Int32(prefix.utf8.count) : 0
        names.sort { $0.name < $1.name }
        for (name, type) in names {
            let path = prefix + name
            switch name.hasPrefix(".") ? .other : kind(path, type: type) {
            case .file:
                listing.entries.append(
                    .listedFile(
                        Listing.ListedFile(
                            path: path, directory: kept >= 0 ? kept : AT_FDCWD, nameOffset: nameOffset)))
            case .directory:
                if recursive {
                    list(directory: path, recursive: true, into: &listing, keeping: &descriptors, upTo: limit)
                } else {
                    listing.skippedDirectories += 1
                }
            case .other: listing.skippedOther += 1
            }
        }
    }

    private enum Kind { case file, directory, other }

    /// What `path` itself is (a symbolic link is other) by its readdir `type`, or by lstat where the file system
    /// reports none. What lstat cannot read is other.
    private static func kind(_ path: String, type: UInt8) -> Kind {
        switch Int(type) {
        case DT_REG: return .file
        case DT_DIR: return .directory
        case DT_UNKNOWN:
            var status = stat()
            guard lstat(path, &status) == 0 else { return .other }
            switch status.st_mode & S_IFMT {
            case S_IFREG: return .file
            case S_IFDIR: return .directory
            default: return .other
            }
        default: return .other
        }
    }

    /// Verifies every file of `listing`, printing one line per file and, on standard error, the summary line.
    /// Throws when nothing was verified, with the exit status of the worst outcome, or when standard output fails;
    /// standard input (`-`) named more than once is a usage error, since files are read side by side.
    static func verify(
        _ listing: Listing, named paths: [String], with verifier: PurchaseVerifier, options: VerificationOptions,
        json: Bool
    ) throws(CommandFailure) {
        guard paths.filter({ $0 == "-" }).count <= 1 else {
            throw .usage("standard input (-) can be named only once")
        }
        guard !listing.entries.isEmpty else {
            let skipped = listing.skipped > 0 ? " (skipped \(listing.skippedDetail))" : ""
            throw .rejected("no files to verify in \(paths.joined(separator: ", "))\(skipped)")
        }
        var counts = (valid: 0, invalid: 0, unreadable: 0)
        var output: [UInt8] = []
        output.reserveCapacity(outputBuffer + outputBuffer / 2)
        let workers = ReceiptVerifier.defaultThreadCount
        let progress = Progress(label: "receipt verify", unit: "files", total: listing.entries.count)
        defer { progress?.finish() }
        let readAhead = ReadAhead(
            listing, bytesPerFile: min(verifier.receipts.limits.maximumInputSize + 1, readAheadBytesPerFile),
            distance: readAheadDistance)
        defer { readAhead.stop() }
        try BatchPipeline.run(
            count: listing.entries.count, workers: workers, window: windowPerWorker * workers,
            producer: { worker in
                // Workers open, read and close files side by side: each but the calling thread does so through a
                // descriptor table of its own (the calling thread keeps the process's, then used by it alone).
                // On one shared table Linux took its lock for every open and close, and counted a reference on the
                // file for every read, from both CPUs: a 2,000-file batch spent 11 % of its CPU time in system calls,
                // 8 % with tables of their own (0.2-0.5 ms less time a run).
                if worker > 0 { DescriptorTable.unshareForCallingThread() }
                // The other workers start once worker 0 has verified the first file (BatchPipeline), from copies of
                // the certificates it decoded and the chain it validated: 0.4 ms less of a 2,000-file batch.
                let verifier = worker == 0 ? verifier : verifier.withOwnCaches()
                var coldReads = ColdReads(window: coldFilesWindow, threshold: coldFilesToReadAhead)
                return { index in
                    readAhead.workerTook(index)
                    let outcome = outcome(of: listing.entries[index], with: verifier, options: options, json: json)
                    if coldReads.afterFile(fromDisk: outcome.readFromDisk) { readAhead.start(from: index) }
                    return outcome
                }
            },
            consume: { (outcome: Outcome) throws(CommandFailure) in
                switch outcome.kind {
                case .valid: counts.valid += 1
                case .invalid: counts.invalid += 1
                case .unreadable: counts.unreadable += 1
                }
                output += outcome.line
                progress?.advance()
                if output.count >= outputBuffer {
                    progress?.finish()
                    try Files.writeAllToStandardOutput(output)
                    output.removeAll(keepingCapacity: true)
                }
            })
        progress?.finish()
        try Files.writeAllToStandardOutput(output)
        let total = counts.valid + counts.invalid + counts.unreadable
        var summary =
            "\(total) \(total == 1 ? "file" : "files"), \(counts.valid) valid, \(counts.invalid) invalid, "
            + "\(counts.unreadable) unreadable, \(listing.skipped) skipped"
        if listing.skipped > 0 { summary += ": \(listing.skippedDetail)" }
        if counts.unreadable > 0 { throw .io(summary) }
        if counts.invalid > 0 { throw .rejected(summary) }
        Files.printError("receipt verify: \(summary)")
    }

    /// One file's line of output, how it counts in the summary, and whether reading it waited for the disk.
    struct Outcome: Sendable {
        enum Kind: Sendable { case valid, invalid, unreadable }
        let kind: Kind
        let line: [UInt8]
        var readFromDisk = false
    }

    /// Reads, verifies and formats one entry: what a worker does. The format is detected once, both to verify and
    /// to name it in a failure's line.
    private static func outcome(
        of entry: Listing.Entry, with verifier: PurchaseVerifier, options: VerificationOptions, json: Bool
    ) -> Outcome {
        let file: String
        switch entry {
        case .file(let path): file = path
        case .listedFile(let listed): file = listed.path
        case .unreadableDirectory(let directory, let message):
            return Outcome(
                kind: .unreadable, line: unreadableLine(directory, "cannot read \(directory): \(message)", json: json))
        }
        let input: [UInt8]
        let limit = verifier.receipts.limits.maximumInputSize
        var fromDisk = false
        do {
            if case .listedFile(let listed) = entry {
                input = try Files.readListedFile(listed, limit: limit, fromDisk: &fromDisk)
            } else {
                input = try Files.read(file, limit: limit)
            }
        } catch {
            return Outcome(kind: .unreadable, line: unreadableLine(file, error.message, json: json))
        }
        let format = PurchaseProofFormat.detect(input)
        let result = Result { () throws(PurchaseProofError) in
            try verifier.verify(input, as: format, options: options)
        }
        let kind: Outcome.Kind = if case .failure = result { .invalid } else { .valid }
        return Outcome(
            kind: kind,
            line: json ? jsonLine(file, result, format: format) : Array(textLine(file, result, format: format).utf8),
            readFromDisk: fromDisk)
    }

    private static func unreadableLine(_ file: String, _ message: String, json: Bool) -> [UInt8] {
        guard json else { return Array("\(file): unreadable: \(message)\n".utf8) }
        return jsonLine { line in
            line.add("file", string: file)
            line.add("valid", .bool(false))
            line.addObject("error") { error in
                error.add("code", string: "unreadable_file")
                error.add("message", string: message)
            }
        }
    }

    private static func jsonLine(
        _ file: String, _ result: Result<VerifiedPurchaseProof, PurchaseProofError>, format: PurchaseProofFormat
    ) -> [UInt8] {
        jsonLine { line in
            line.add(fileKey, string: file)
            ProofOutput.add(result, format: format, to: &line)
        }
    }

    /// The first member of every JSON line.
    private static let fileKey = JSONKey("file")

    /// Room a JSON line starts with: a line of a receipt of a few purchases (about 800 bytes) is written without
    /// growing, where growing from nothing took seven allocations and copies.
    static let jsonLineCapacity = 1 << 10

    /// The object whose members `build` adds, as one line of output.
    private static func jsonLine(_ build: (inout JSONObjectWriter) -> Void) -> [UInt8] {
        var line: [UInt8] = []
        line.reserveCapacity(jsonLineCapacity)
        JSONObjectWriter.write(to: &line, build)
        line.append(UInt8(ascii: "\n"))
        return line
    }

    private static func textLine(
        _ file: String, _ result: Result<VerifiedPurchaseProof, PurchaseProofError>, format: PurchaseProofFormat
    ) -> String {
        switch result {
        case .success(.appReceipt(let verified)):
            let count = verified.receipt.inAppPurchases.count
            return "\(file): valid: \(verified.receipt.bundleID), \(count) \(count == 1 ? "purchase" : "purchases")\n"
        case .success(let proof): return "\(file): valid \(proof.format.rawValue)\n"
        case .failure(let error): return "\(file): \(ProofOutput.failure(error, format: format))\n"
        }
    }
}
