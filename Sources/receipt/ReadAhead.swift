import Glibc
import Synchronization
import Threads

/// Reading ahead of a batch's workers once their files turn out not to be in memory: a thread of its own asks
/// Linux to start reading each of the next listed files (``Files/startReading(_:bytes:)``), at most `distance`
/// files beyond the last one a worker took, so that the disk works while the workers verify.
///
/// A directory whose files have left the page cache (written long ago, or paged out by the kernel's reclaim) is
/// otherwise read one file per worker at a time, each read waiting for the disk: 2,000 receipts took 140 ms instead
/// of 40, the CPUs mostly idle. The thread starts only when a worker's reads went to the disk (``DiskReads``):
/// opening every file a second time would cost a batch in memory a tenth of its time.
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

    /// Starts the thread, reading ahead from the file after `index` (the one a worker took), unless it started
    /// before or the batch is over. When the system makes no thread, nothing is read ahead.
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
        while state.load(ordering: .relaxed) == State.running.rawValue {
            let last = taken.load(ordering: .relaxed)
            next = max(next, last + 1)
            guard next < listing.entries.count else { return }
            guard next - last <= distance else {
                usleep(Self.pause)
                continue
            }
            if case .listedFile(let file) = listing.entries[next] { Files.startReading(file, bytes: bytesPerFile) }
            next += 1
        }
    }
}

/// Whether a thread's reads of files went to the disk: its counts of blocks read and of major page faults (Linux's
/// per-thread `ru_inblock` and `ru_majflt`), looked at after its first file and then every `interval` files. Blocks
/// read while the thread also took major faults are not counted: those may be the program's own pages (its code
/// paged out since it last ran), read back in whatever the files' state.
struct DiskReads {
    private let interval: Int
    private var untilNextLook = 1
    private var counts = DiskReads.threadCounts()

    init(interval: Int) {
        self.interval = max(1, interval)
    }

    /// Called after each file the thread read: true when, at one of the looks, the thread has read blocks from a
    /// disk since the look before (or since it was made) and taken no major page fault meanwhile.
    mutating func afterFile() -> Bool {
        untilNextLook -= 1
        guard untilNextLook <= 0 else { return false }
        untilNextLook = interval
        let now = Self.threadCounts()
        defer { counts = now }
        return now.blocksRead > counts.blocksRead && now.majorFaults == counts.majorFaults
    }

    /// Linux's RUSAGE_THREAD, which the Glibc module does not export (it needs _GNU_SOURCE).
    private static var calledThread: Int32 { 1 }

    /// The blocks the calling thread has read from disks and the major page faults it took; zeros where the system
    /// does not count them.
    private static func threadCounts() -> (blocksRead: Int, majorFaults: Int) {
        var usage = rusage()
        guard getrusage(__rusage_who_t(calledThread), &usage) == 0 else { return (0, 0) }
        return (usage.ru_inblock, usage.ru_majflt)
    }
}
