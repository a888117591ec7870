import Glibc
import Threads

/// Work on numbered items spread over threads, its results consumed in item order, with a bounded window: a worker
/// takes an item only while fewer than `window` items are taken and not yet consumed, so at most `window` results
/// are held (in the making, waiting, or being consumed) however many items there are.
///
/// There is no consuming thread: the worker that makes a result which lets the next ones in order go consumes them
/// itself, one worker at a time, and the calling thread is worker 0. A thread of its own for the consumer made three
/// threads for two cores: each time a worker woke it, Linux ran it on that worker's CPU, the worker waited behind it,
/// and the other CPU often idled (112 context switches and 213 futex calls in a 2,000-file batch; 7 and 44 without).
///
/// Worker 0 makes the first item alone: the other workers make their producers, and take items, once its result is
/// in, or once `leadTime` has passed. The first item pays what is done once per process (OpenSSL building its
/// decoders and fetching algorithms, a certificate chain validated before its verdict is cached), and workers that
/// decode their first certificates at once wait on each other's locks: in a batch of 2,000 files whose second worker
/// started 0.5 ms after the first, the two first receipts took 2.5-3 ms instead of 1.2 in about half the runs. A
/// producer made after the first result can start from what it left (a verifier copying worker 0's caches). The
/// others look for the result every 0.1 ms rather than wait to be woken: woken by worker 0, Linux queued the thread
/// on worker 0's CPU, where it waited up to 3 ms while the other CPU idled.
final class BatchPipeline<Output: Sendable, Failure: Error>: @unchecked Sendable {
    private let count: Int
    private let window: Int
    private let leadTime: Duration
    /// How often, in microseconds, a worker other than the first looks whether the first result is in.
    private static var firstResultPoll: UInt32 { 100 }
    private let producer: @Sendable (Int) -> (Int) -> Output
    /// What consumes the results. Not `Sendable`: one worker at a time calls it (see ``consumeDue()``), and the
    /// role passes from one worker to the next under the lock, which orders what each of them did before. Let go of
    /// (nil) before ``run`` returns: the threads may hold the pipeline a moment longer, never the closure.
    private var consume: ((Output) throws(Failure) -> Void)?
    /// Guards every property below, and is what workers wait on.
    private let condition = Condition()
    /// The results made and not yet consumed, item `index` at `index % window`.
    private var slots: [Output?]
    /// The results the consuming worker took out of `slots`, to consume outside the lock.
    private var taken: [Output] = []
    /// The first item no worker has taken.
    private var nextToTake = 0
    /// The first item not consumed yet: workers take items below `consumed + window` only.
    private var consumed = 0
    private var workersRunning = 0
    private var workersWaiting = 0
    private var callerWaiting = false
    /// What `consume` threw; once set, nothing more is taken or consumed.
    private var failure: Failure?
    /// Whether a result has been made (or waiting for the first is over).
    private var firstMade = false

    private init(
        count: Int, window: Int, leadTime: Duration, producer: @escaping @Sendable (Int) -> (Int) -> Output,
        consume: @escaping (Output) throws(Failure) -> Void
    ) {
        self.count = count
        self.window = window
        self.leadTime = leadTime
        self.producer = producer
        self.consume = consume
        slots = [Output?](repeating: nil, count: window)
        taken.reserveCapacity(window)
    }

    /// Produces the result of every index of `0..<count` on `workers` threads, the calling thread and `workers - 1`
    /// of their own, and calls `consume` with each result in index order, one call at a time, on whichever of them
    /// made the result that let it go; at most `window` results are held at once. Each worker calls `producer`
    /// once, with its number (0 to `workers - 1`; the calling thread is 0), on its own thread before it takes an
    /// item, and makes its results with the function that returns: what one worker keeps (a verifier with caches of
    /// its own) stays with it. Worker 0 makes the first item alone, and the others call `producer` once its result
    /// is in, or after `leadTime` (see ``BatchPipeline``). Returns once every result is consumed and every worker has
    /// finished. When `consume` throws, no item is taken or consumed any more, the workers finish the ones they hold,
    /// and the error is thrown. When the system makes fewer threads than asked, the ones it made and the calling
    /// thread do the work.
    static func run(
        count: Int, workers: Int, window: Int, leadTime: Duration = .milliseconds(2),
        producer: @escaping @Sendable (_ worker: Int) -> (_ index: Int) -> Output,
        consume: (Output) throws(Failure) -> Void
    ) throws(Failure) {
        let failure = withoutActuallyEscaping(consume) { consume in
            let pipeline = BatchPipeline(
                count: count, window: max(1, window), leadTime: leadTime, producer: producer, consume: consume)
            pipeline.workersRunning = max(1, min(workers, count))
            var started = 0
            for _ in 1..<pipeline.workersRunning {
                do {
                    try DetachedThread.start(member: started) { [started] in pipeline.work(worker: started + 1) }
                    started += 1
                } catch {
                    pipeline.condition.withLock { pipeline.workersRunning -= 1 }
                }
            }
            pipeline.work(worker: 0)
            // The workers use `consume`, which must not outlive this call: wait for the last of them.
            return pipeline.condition.withLock {
                while pipeline.workersRunning > 0 {
                    pipeline.callerWaiting = true
                    pipeline.condition.wait()
                    pipeline.callerWaiting = false
                }
                pipeline.consume = nil
                return pipeline.failure
            }
        }
        if let failure { throw failure }
    }

    /// A worker: consumes the results that are due when no other worker is; else takes the next item while the
    /// window has room, produces its result and puts it in its slot. A worker other than 0 first waits for the first
    /// result, `leadTime` at most, looking for it every ``firstResultPoll`` microseconds.
    private func work(worker: Int) {
        if worker > 0 {
            let deadline = Deadline(after: leadTime)
            while !condition.withLock({ firstMade || failure != nil }) && Deadline.now < deadline {
                usleep(Self.firstResultPoll)
            }
            condition.withLock { firstMade = true }
        }
        let produce = producer(worker)
        condition.lock()
        while true {
            if failure == nil && consumed < count && slots[consumed % window] != nil {
                consumeDue()
                continue
            }
            guard failure == nil && nextToTake < count else { break }
            if nextToTake - consumed >= window {
                workersWaiting += 1
                condition.wait()
                workersWaiting -= 1
                continue
            }
            let index = nextToTake
            nextToTake += 1
            condition.unlock()
            let output = produce(index)
            condition.lock()
            slots[index % window] = output
            firstMade = true
        }
        workersRunning -= 1
        if callerWaiting && workersRunning == 0 { condition.broadcast() }
        condition.unlock()
    }

    /// Takes the results that are ready in order from the first not consumed, and consumes them outside the lock;
    /// then gives waiting workers their room. Called with the lock held, when the first result not consumed is
    /// ready. One worker at a time: until it is done, `consumed` stays at the first result it took, whose slot it
    /// emptied, so no other worker finds that result ready.
    private func consumeDue() {
        var next = consumed
        while next < count, let output = slots[next % window].take() {
            taken.append(output)
            next += 1
        }
        condition.unlock()
        var thrown: Failure?
        do throws(Failure) {
            if let consume { for output in taken { try consume(output) } }
        } catch {
            thrown = error
        }
        taken.removeAll(keepingCapacity: true)
        condition.lock()
        consumed = next
        if let thrown { failure = thrown }
        if workersWaiting > 0 || thrown != nil { condition.broadcast() }
    }
}
