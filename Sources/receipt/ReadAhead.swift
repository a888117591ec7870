import Glibc
import Synchronization
import Threads

/// Reading ahead of a batch's workers while their files turn out not to be in memory: a thread of its own asks
/// Linux to start reading each of the next listed files (``Files/startReading(_:bytes:)``), at most `distance`
/// files beyond the last one a worker took, so that the disk works while the workers verify.
///
/// A directory whose files have left the page cache (written long ago, or paged out by the kernel's reclaim) is
/// otherwise read one file per worker at a time, each read waiting for the disk: 2,000 receipts took 140 ms instead
/// of 40, the CPUs mostly idle. The thread starts when a worker found several of its last files out of memory
/// (``ColdReads``), not for the few that the kernel's reclaim scatters through a directory read a while ago, which
/// cost less than opening every file a second time. It stops by itself, back to idle, once the files it asked for
/// in its last ``filesPerLook`` were all in memory (its count of blocks read from disks did not grow); a worker that
/// finds files out of memory again starts it again.
final class ReadAhead: Sendable {
    /// The batch's listing (its own entries, not a copy, and the directories' descriptors its files are opened
    /// from, kept open while the thread may use them), of which only listed files are read ahead: a path named on the
    /// command line may be standard input or a FIFO.
    private let listing: Batch.Listing
    private let bytesPerFile: Int
    private let distance: Int
    /// The highest index a worker has taken, kept only while the thread runs.
    private let taken = Atomic(-1)
    private let state = Atomic(State.idle.rawValue)

    private enum State: Int {
        case idle, running, stopped
    }

    /// How long, in microseconds, the thread waits before looking again when it is `distance` files ahead. Each time
    /// it wakes it takes a core from a worker, so it should wake seldom, yet stay ahead: in 1 ms two workers take
    /// about 65 files of 3 KB from memory, half of a batch's distance (``Batch/readAheadDistance``, 128). A smaller
    /// distance would want a shorter pause. Waking every 0.2 ms instead (about 120 times in a 2,000-file batch) made
    /// such a batch slower: with 2 % of its files out of the page cache 42.2 ms against 40.3 (the medians of 15
    /// alternating pairs), with 10 % 44.1 against 41.2, with all of them 45.4 against 43.5.
    private static var pause: UInt32 { 1000 }

    /// Every how many files it asks for the thread looks whether they brought any read from the disk.
    private static var filesPerLook: Int { 64 }

    /// Read-ahead for `listing`'s files, of their first `bytesPerFile` bytes, never more than `distance` files past
    /// the last one a worker took. Nothing is read until ``start(from:)``.
    init(_ listing: Batch.Listing, bytesPerFile: Int, distance: Int) {
        self.listing = listing
        self.bytesPerFile = bytesPerFile
        self.distance = max(1, distance)
    }

    /// Notes that a worker took the file at `index`, for the thread to stay ahead of. Costs one atomic load while
    /// the thread is not running.
    func workerTook(_ index: Int) {
        guard state.load(ordering: .relaxed) == State.running.rawValue else { return }
        taken.max(index, ordering: .relaxed)
    }

    /// Starts the thread, reading ahead from the file after `index` (the one a worker took), unless it is running
    /// or was stopped. When the system makes no thread, nothing is read ahead.
    func start(from index: Int) {
        guard
            state.compareExchange(
                expected: State.idle.rawValue, desired: State.running.rawValue,
                ordering: .relaxed
            ).exchanged
        else { return }
        taken.max(index, ordering: .relaxed)
        do {
            try DetachedThread.start { [self] in run() }
        } catch {
            state.store(State.stopped.rawValue, ordering: .relaxed)
        }
    }

    /// Ends reading ahead: the thread stops after the file it is at, and a later ``start(from:)`` does nothing.
    func stop() {
        state.store(State.stopped.rawValue, ordering: .relaxed)
    }

    private func run() {
        // Opens and closes files beside the workers, as they do, in a descriptor table of its own (see Batch).
        DescriptorTable.unshareForCallingThread()
        var next = 0
        var askedSinceLook = 0
        var blocksAtLook = Self.blocksRead()
        while state.load(ordering: .relaxed) == State.running.rawValue {
            let last = taken.load(ordering: .relaxed)
            next = max(next, last + 1)
            guard next < listing.entries.count else { return }
            guard next - last <= distance else {
                usleep(Self.pause)
                continue
            }
            if case .listedFile(let file) = listing.entries[next] {
                Files.startReading(file, bytes: bytesPerFile)
                askedSinceLook += 1
            }
            next += 1
            if askedSinceLook == Self.filesPerLook {
                let blocks = Self.blocksRead()
                if blocks == blocksAtLook {
                    _ = state.compareExchange(
                        expected: State.running.rawValue, desired: State.idle.rawValue, ordering: .relaxed)
                    return
                }
                askedSinceLook = 0
                blocksAtLook = blocks
            }
        }
    }

    /// Linux's RUSAGE_THREAD, which the Glibc module does not export (it needs _GNU_SOURCE).
    private static var calledThread: Int32 { 1 }

    /// The blocks the calling thread has had read from disks (`ru_inblock`: reads it started, posix_fadvise's
    /// included), or 0 where the system does not count them.
    private static func blocksRead() -> Int {
        var usage = rusage()
        guard getrusage(__rusage_who_t(calledThread), &usage) == 0 else { return 0 }
        return usage.ru_inblock
    }
}

/// Whether a worker's files are out of memory often enough for reading ahead to pay: counted in windows of
/// `window` files, true when the `threshold`th of a window had to be read from the disk.
struct ColdReads {
    private let window: Int
    private let threshold: Int
    private var filesInWindow = 0
    private var coldInWindow = 0

    init(window: Int, threshold: Int) {
        self.window = max(1, window)
        self.threshold = max(1, threshold)
    }

    /// Called after each file the worker read, with whether reading it waited for the disk.
    mutating func afterFile(fromDisk: Bool) -> Bool {
        if filesInWindow == window {
            filesInWindow = 0
            coldInWindow = 0
        }
        filesInWindow += 1
        guard fromDisk else { return false }
        coldInWindow += 1
        return coldInWindow == threshold
    }
}
