import Foundation
import Testing

@testable import receipt

/// A batch's listing opens its files inside the directories it listed: each listed directory (up to
/// `Batch.keptDirectories`) keeps a descriptor for as long as the listing lives, and its files are opened by name in
/// it, so that renaming a directory on the way cannot change which file is read.
@Suite("A batch's listing of directories")
struct ListingTests {
    /// A scratch directory holding `names` as directories, each with the files `a.der` and `b.der`.
    func tree(_ names: [String]) throws -> CLIRunner {
        let runner = try CLIRunner()
        for name in names {
            try FileManager.default.createDirectory(atPath: runner.path(name), withIntermediateDirectories: true)
            for file in ["a.der", "b.der"] {
                try Data("\(name)/\(file)".utf8).write(to: URL(fileURLWithPath: runner.path("\(name)/\(file)")))
            }
        }
        return runner
    }

    /// The listed files of `listing`, in order.
    func listedFiles(_ listing: Batch.Listing) -> [Batch.Listing.ListedFile] {
        listing.entries.compactMap { if case .listedFile(let file) = $0 { file } else { nil } }
    }

    /// The bytes of a listed file, read as a batch's worker reads them.
    func readListed(_ file: Batch.Listing.ListedFile) throws -> [UInt8] {
        var fromDisk = false
        return try Files.readListedFile(file, limit: 1 << 20, fromDisk: &fromDisk)
    }

    /// What the descriptor `descriptor` of this process refers to, or nil when it is not open.
    func target(of descriptor: Int32) -> String? {
        try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(descriptor)")
    }

    @Test("a listed file is opened by its name in the listed directory, which keeps its descriptor")
    func filesAreOpenedInTheirDirectory() throws {
        let runner = try tree(["receipts"])
        let listing = try #require(Batch.listing([runner.path("receipts")], recursive: false))
        let files = listedFiles(listing)
        #expect(files.map(\.path) == [runner.path("receipts/a.der"), runner.path("receipts/b.der")])
        #expect(listing.directories.descriptors.count == 1)
        for file in files {
            #expect(file.directory == listing.directories.descriptors[0])
            let name = String(decoding: file.path.utf8.dropFirst(Int(file.nameOffset)), as: UTF8.self)
            #expect(name == URL(fileURLWithPath: file.path).lastPathComponent)
        }
        #expect(target(of: files[0].directory) == runner.path("receipts"))
    }

    @Test("renamed after it was listed, a directory's files are still read from it, under the paths listed")
    func renamedDirectoryIsStillRead() throws {
        let runner = try tree(["receipts"])
        let listing = try #require(Batch.listing([runner.path("receipts")], recursive: false))
        try FileManager.default.moveItem(atPath: runner.path("receipts"), toPath: runner.path("moved"))
        let read = try listedFiles(listing).map(readListed)
        #expect(read == [Array("receipts/a.der".utf8), Array("receipts/b.der".utf8)])
    }

    @Test("a directory put where a listed one was does not change which files are read")
    func replacedDirectoryIsNotRead() throws {
        let runner = try tree(["receipts", "other"])
        let listing = try #require(Batch.listing([runner.path("receipts")], recursive: false))
        try FileManager.default.moveItem(atPath: runner.path("receipts"), toPath: runner.path("moved"))
        try FileManager.default.moveItem(atPath: runner.path("other"), toPath: runner.path("receipts"))
        let read = try listedFiles(listing).map(readListed)
        #expect(read == [Array("receipts/a.der".utf8), Array("receipts/b.der".utf8)])
    }

    @Test("past the limit of directories kept, files are opened by their paths; a directory without files keeps none")
    func furtherDirectoriesUsePaths() throws {
        let runner = try tree(["tree/one", "tree/two", "tree/three"])
        let listing = try #require(Batch.listing([runner.path("tree")], recursive: true, directoryLimit: 2))
        let files = listedFiles(listing)
        #expect(files.count == 6)
        #expect(listing.directories.descriptors.count == 2)
        let byPath = files.filter { $0.directory == AT_FDCWD }
        #expect(byPath.map(\.path) == [runner.path("tree/two/a.der"), runner.path("tree/two/b.der")])
        #expect(byPath.allSatisfy { $0.nameOffset == 0 })
        #expect(try files.map(readListed).count == 6)
    }

    @Test("a file that cannot be opened is explained by what the listed directory holds, not by its path now")
    func failureIsExplainedWhereTheFileWasOpened() throws {
        let runner = try tree(["receipts"])
        let listing = try #require(Batch.listing([runner.path("receipts")], recursive: false))
        try FileManager.default.moveItem(atPath: runner.path("receipts"), toPath: runner.path("moved"))
        try FileManager.default.removeItem(atPath: runner.path("moved/a.der"))
        try FileManager.default.createDirectory(
            atPath: runner.path("receipts/a.der"), withIntermediateDirectories: true)
        #expect {
            _ = try readListed(listedFiles(listing)[0])
        } throws: { error in
            (error as? CommandFailure)?.message == "cannot read \(runner.path("receipts/a.der")): no such file"
        }
    }

    @Test("directories keep 256 descriptors at most, and no more than a quarter of the limit of open files")
    func keptDirectoriesUnderTheLimit() {
        #expect(Batch.directoriesKept(underLimit: 1024) == 256)
        #expect(Batch.directoriesKept(underLimit: .max) == 256)
        #expect(Batch.directoriesKept(underLimit: 32) == 8)
        #expect(Batch.directoriesKept(underLimit: 3) == 0)
    }

    @Test("with 32 open files allowed, 40 directories of files verify")
    func fewOpenFilesAllowed() throws {
        let runner = try CLIRunner()
        let receipt = try runner.signValidReceipt()
        for index in 0..<40 {
            try FileManager.default.createDirectory(
                atPath: runner.path("tree/\(index)"), withIntermediateDirectories: true)
            try Data(receipt).write(to: URL(fileURLWithPath: runner.path("tree/\(index)/valid.der")))
        }
        let result = try CLIRunner.run(
            URL(fileURLWithPath: "/bin/sh"),
            ["-c", "ulimit -n 32 && exec \"$0\" verify -r tree --trust dev/root-ca.pem", CLIRunner.executable.path],
            in: runner.directory)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardError.contains("40 files, 40 valid"))
    }

    @Test("the directories' descriptors are closed once the last copy of the listing is gone")
    func descriptorsCloseWithTheListing() throws {
        let runner = try tree(["receipts"])
        var listing = Batch.listing([runner.path("receipts")], recursive: false)
        let descriptor = try #require(listing?.directories.descriptors.first)
        var copy = listing
        listing = nil
        #expect(copy?.entries.count == 2)
        #expect(target(of: descriptor) == runner.path("receipts"))
        copy = nil
        #expect(target(of: descriptor) != runner.path("receipts"))
    }
}
