import Foundation
import Testing

@testable import receipt

/// Reading ahead of a batch's workers: the files after the last one a worker took are brought into memory, no
/// further than the read-ahead's distance and only the directory's listed files; nothing once stopped, and nothing
/// more once the files it asks for are found in memory; a worker starts it when several of its files were not in
/// memory, and reads a listed file whole whatever part of it is. Files are dropped from the page cache (written, synced,
/// posix_fadvise DONTNEED) and their pages looked up with mincore.
@Suite("Read-ahead")
struct ReadAheadTests {
    /// A scratch directory of `count` files of 8 KiB, none of them in the page cache.
    struct ColdFiles {
        let runner: CLIRunner
        let paths: [String]

        init(count: Int, size: Int = 8 << 10) throws {
            let runner = try CLIRunner()
            let paths = (0..<count).map { runner.path(String(format: "%03d.der", $0)) }
            self.runner = runner
            self.paths = paths
            for path in paths {
                try Data(repeating: 0x30, count: size).write(to: URL(fileURLWithPath: path))
            }
            for path in paths { Self.drop(path) }
            try #require(
                paths.allSatisfy { !Self.inMemory($0) },
                "this file system keeps files in memory after posix_fadvise DONTNEED (tmpfs?), so the test cannot tell")
        }

        /// Writes `path` to disk and drops its pages from the page cache.
        static func drop(_ path: String) {
            let descriptor = open(path, O_RDONLY)
            #expect(descriptor >= 0)
            fsync(descriptor)
            posix_fadvise(descriptor, 0, 0, POSIX_FADV_DONTNEED)
            close(descriptor)
        }

        /// Whether any page of `path` is in the page cache.
        static func inMemory(_ path: String) -> Bool {
            pagesInMemory(path).contains(true)
        }

        /// Whether each page of `path` is in the page cache, in order; none for a file that cannot be mapped.
        static func pagesInMemory(_ path: String) -> [Bool] {
            let descriptor = open(path, O_RDONLY)
            defer { close(descriptor) }
            var status = stat()
            guard descriptor >= 0, fstat(descriptor, &status) == 0, status.st_size > 0 else { return [] }
            let length = Int(status.st_size)
            guard let mapping = mmap(nil, length, PROT_READ, MAP_SHARED, descriptor, 0), mapping != MAP_FAILED else {
                return []
            }
            defer { munmap(mapping, length) }
            let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
            var pages = [UInt8](repeating: 0, count: (length + pageSize - 1) / pageSize)
            guard mincore(mapping, length, &pages) == 0 else { return [] }
            return pages.map { $0 & 1 == 1 }
        }

        /// The indexes of the files in memory.
        var inMemory: [Int] { paths.indices.filter { Self.inMemory(paths[$0]) } }

        /// A listing of the files, each as a directory's listing finds it.
        var listing: Batch.Listing {
            var listing = Batch.Listing()
            listing.entries = paths.indices.map { .listedFile(listedFile($0)) }
            return listing
        }

        /// A read-ahead of `listing` (the files' own by default) started as after a worker took file `index`.
        func readAhead(
            distance: Int, from index: Int, bytesPerFile: Int = 1 << 20, listing: Batch.Listing? = nil
        ) -> ReadAhead {
            let readAhead = ReadAhead(listing ?? self.listing, bytesPerFile: bytesPerFile, distance: distance)
            readAhead.start(from: index)
            return readAhead
        }

        /// The indexes of the files in memory once those of `indexes` are (10 s at most) and a read-ahead has had
        /// ``ReadAheadTests/overreach`` more to go too far.
        func inMemory(onceRead indexes: ClosedRange<Int>) -> [Int] {
            waitUntilInMemory(indexes)
            usleep(ReadAheadTests.overreach)
            return inMemory
        }

        /// Reads the file at `index` whole; returns its size.
        func read(_ index: Int) throws -> Int {
            try Data(contentsOf: URL(fileURLWithPath: paths[index])).count
        }

        /// The file at `index` as a directory's listing finds it.
        func listedFile(_ index: Int) -> Batch.Listing.ListedFile {
            Batch.Listing.ListedFile(path: paths[index], directory: AT_FDCWD, nameOffset: 0)
        }

        /// Waits, 10 s at most, until every file of `indexes` is in memory.
        func waitUntilInMemory(_ indexes: ClosedRange<Int>) {
            let deadline = Date().addingTimeInterval(10)
            while !indexes.allSatisfy({ Self.inMemory(paths[$0]) }) && Date() < deadline { usleep(1_000) }
        }
    }

    /// Time left for a read-ahead to go too far, once it has read what it should: it reads a file in microseconds.
    static let overreach: UInt32 = 200_000

    @Test("started after a worker took a file, it reads the files after it, no further than its distance")
    func readsUpToItsDistance() throws {
        let files = try ColdFiles(count: 40)
        let readAhead = files.readAhead(distance: 8, from: 4)
        defer { readAhead.stop() }
        #expect(files.inMemory(onceRead: 5...12) == Array(5...12))
    }

    @Test("it follows the workers: a file taken further on moves its reach as far past that file")
    func followsTheWorkers() throws {
        let files = try ColdFiles(count: 40)
        let readAhead = files.readAhead(distance: 4, from: 0)
        defer { readAhead.stop() }
        files.waitUntilInMemory(1...4)
        readAhead.workerTook(20)
        #expect(files.inMemory(onceRead: 21...24) == Array(1...4) + Array(21...24))
    }

    @Test("once stopped it reads nothing more, and it cannot be started again")
    func stopEndsIt() throws {
        let files = try ColdFiles(count: 40)
        let readAhead = files.readAhead(distance: 4, from: 0)
        files.waitUntilInMemory(1...4)
        readAhead.stop()
        readAhead.workerTook(20)
        readAhead.start(from: 30)
        usleep(Self.overreach)
        #expect(files.inMemory == Array(1...4))
    }

    @Test("it stops by itself when the files it asks for are in memory, and starts again when asked")
    func stopsWhileFilesAreInMemory() throws {
        let files = try ColdFiles(count: 150)
        for index in 0..<100 { _ = try files.read(index) }
        let readAhead = files.readAhead(distance: 149, from: 0)
        defer { readAhead.stop() }
        usleep(Self.overreach)
        #expect(files.inMemory == Array(0..<100), "it went on past 64 files found in memory")
        readAhead.start(from: 99)
        #expect(files.inMemory(onceRead: 100...149) == Array(0...149))
    }

    @Test("only a directory's listed files are read ahead, not paths named on the command line")
    func onlyListedFiles() throws {
        let files = try ColdFiles(count: 6)
        var listing = files.listing
        listing.entries[2] = .file(files.paths[2])
        let readAhead = files.readAhead(distance: 8, from: 0, listing: listing)
        defer { readAhead.stop() }
        #expect(files.inMemory(onceRead: 3...5) == [1, 3, 4, 5])
    }

    @Test("of a large file, only the bytes asked for are read ahead")
    func onlyTheBytesAskedFor() throws {
        let files = try ColdFiles(count: 2)
        let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
        let readAhead = files.readAhead(distance: 1, from: 0, bytesPerFile: pageSize)
        defer { readAhead.stop() }
        #expect(files.inMemory(onceRead: 1...1) == [1])
        let pages = ColdFiles.pagesInMemory(files.paths[1])
        #expect(pages == [true] + Array(repeating: false, count: (8 << 10) / pageSize - 1))
    }

    @Test("a worker's files start the read-ahead at the third one out of memory of a window of 32, once")
    func coldReadsStartAtTheThreshold() {
        var reads = ColdReads(window: 32, threshold: 3)
        let starts = (0..<32).map { reads.afterFile(fromDisk: [3, 10, 20, 25].contains($0)) }
        #expect(starts.indices.filter { starts[$0] } == [20])
    }

    @Test("files out of memory in different windows do not add up")
    func coldReadsCountPerWindow() {
        var reads = ColdReads(window: 4, threshold: 2)
        let starts = (0..<12).map { reads.afterFile(fromDisk: [3, 4, 9, 10].contains($0)) }
        #expect(starts.indices.filter { starts[$0] } == [10])
    }

    @Test("a listed file out of memory is read whole and said to come from the disk; read again, it is not")
    func listedFileFromDisk() throws {
        let files = try ColdFiles(count: 1)
        var fromDisk = false
        let first = try Files.readListedFile(files.listedFile(0), limit: 1 << 20, fromDisk: &fromDisk)
        #expect(first.count == 8 << 10 && first.allSatisfy { $0 == 0x30 })
        #expect(fromDisk)
        var again = false
        let second = try Files.readListedFile(files.listedFile(0), limit: 1 << 20, fromDisk: &again)
        #expect(second == first)
        #expect(!again)
    }

    @Test("a listed file whose first page is in memory and second is not is read whole")
    func listedFilePartlyInMemory() throws {
        let files = try ColdFiles(count: 1)
        let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
        _ = try files.read(0)
        let descriptor = open(files.paths[0], O_RDONLY)
        posix_fadvise(descriptor, off_t(pageSize), off_t(pageSize), POSIX_FADV_DONTNEED)
        close(descriptor)
        try #require(ColdFiles.pagesInMemory(files.paths[0]).prefix(2) == [true, false])
        var fromDisk = false
        let bytes = try Files.readListedFile(files.listedFile(0), limit: 1 << 20, fromDisk: &fromDisk)
        #expect(bytes.count == 8 << 10 && bytes.allSatisfy { $0 == 0x30 })
        #expect(fromDisk)
    }

    @Test("a listed file out of memory whose end falls inside a page is read to its end")
    func listedFileEndingInsideAPage() throws {
        let files = try ColdFiles(count: 1, size: 5_000)
        var fromDisk = false
        let bytes = try Files.readListedFile(files.listedFile(0), limit: 1 << 20, fromDisk: &fromDisk)
        #expect(bytes.count == 5_000 && bytes.allSatisfy { $0 == 0x30 })
    }

    @Test("a directory whose files are not in memory verifies to the same lines as when they are")
    func coldDirectoryVerifiesAlike() throws {
        let files = try ColdFiles(count: 1)
        let runner = files.runner
        let receipt = try runner.signValidReceipt()
        try FileManager.default.createDirectory(atPath: runner.path("tree"), withIntermediateDirectories: true)
        let paths = (0..<300).map { runner.path(String(format: "tree/%03d.der", $0)) }
        for (index, path) in paths.enumerated() {
            let content = index % 50 == 7 ? Array(receipt.dropLast()) : receipt
            try Data(content).write(to: URL(fileURLWithPath: path))
        }
        let arguments = ["verify", "tree", "--json", "--trust", "dev/root-ca.pem"]
        let inMemory = try runner.run(arguments)
        for path in paths { ColdFiles.drop(path) }
        try #require(!ColdFiles.inMemory(paths[0]))
        let fromDisk = try runner.run(arguments)
        #expect(inMemory.status == 1)
        #expect(inMemory.standardError.contains("300 files, 294 valid, 6 invalid, 0 unreadable"))
        #expect(fromDisk.status == inMemory.status)
        let sameLines = fromDisk.standardOutput == inMemory.standardOutput
        #expect(sameLines, "the lines of the run from the disk differ from those of the run from memory")
        #expect(fromDisk.standardError == inMemory.standardError)
    }
}
