import Threads

/// Work on numbered items spread over worker threads, its results handed to the calling thread in item order,
/// with a bounded window: a worker takes an item only while fewer than `window` items are taken and not yet
/// consumed, so at most `window` results are held (in the making, waiting, or being consumed) however many items
/// there are.
///
/// The calling thread sleeps until the first result it lacks is there and either half the window is ready, a worker
/// waits for room, or every item is taken: it is woken about twice per window, not once per item.
///
/// The first item is started alone: the other workers take items once its result is in, or once `leadTime` has
/// passed. The first item pays what is done once per process (OpenSSL building its decoders and fetching
/// algorithms, a certificate chain validated before its verdict is cached), and workers that decode their first
/// certificates at once wait on each other's locks. Here a first receipt takes about 1.1 ms, its certificates decoded
/// in the first half: the others starting at 0.5 ms ran 2,000 files 0.7 ms faster than waiting for the whole of it,
/// and 1.6 ms faster than starting at 0.2 ms.
final class BatchPipeline<Output: Sendable>: @unchecked Sendable {
    private let count: Int
    private let window: Int
    private let leadTime: Duration
    private let producer: @Sendable (Int) -> (Int) -> Output
    /// Guards every property below, and is what both sides wait on.
    private let condition = Condition()
    /// The results made and not yet handed over, item `index` at `index % window`.
    private var slots: [Output?]
    /// How many slots hold a result.
    private var ready = 0
    /// The first item no worker has taken.
    private var nextToTake = 0
    /// The first item not handed over to the calling thread.
    private var nextToHand = 0
    /// The first item not consumed yet: workers take items below `consumed + window` only.
    private var consumed = 0
    private var workersRunning = 0
    private var workersWaiting = 0
    private var consumerWaiting = false
    private var stopped = false
    /// Whether a result has been made (or waiting for the first is over).
    private var firstMade = false

    private init(
        count: Int, window: Int, leadTime: Duration, producer: @escaping @Sendable (Int) -> (Int) -> Output
    ) {
        self.count = count
        self.window = window
        self.leadTime = leadTime
        self.producer = producer
        slots = [Output?](repeating: nil, count: window)
    }

    /// Produces the result of every index of `0..<count` on `workers` threads of their own, and calls `consume` on
    /// the calling thread with each result in index order; at most `window` results are held at once. Each worker
    /// calls `producer` once, with its number (0 to `workers - 1`), on its own thread before it takes an item, and
    /// makes its results with the function that returns: what one worker keeps (a verifier with caches of its own)
    /// stays with it. Returns once every result is consumed and every worker has finished. When `consume` throws,
    /// no item is taken any more, the workers finish the ones they hold, and the error is thrown. When the system
    /// makes fewer threads than asked, the ones it made do the work; when it makes none, the calling thread is
    /// worker 0 and produces and consumes each item in turn. The first item is produced alone, for `leadTime` at
    /// most (see ``BatchPipeline``).
    static func run<Failure: Error>(
        count: Int, workers: Int, window: Int, leadTime: Duration = .microseconds(500),
        producer: @escaping @Sendable (_ worker: Int) -> (_ index: Int) -> Output,
        consume: (Output) throws(Failure) -> Void
    ) throws(Failure) {
        let pipeline = BatchPipeline(count: count, window: max(1, window), leadTime: leadTime, producer: producer)
        let threads = max(1, min(workers, count))
        pipeline.workersRunning = threads
        var started = 0
        for _ in 0..<threads {
            do {
                try DetachedThread.start(member: started) { [started] in pipeline.work(worker: started) }
                started += 1
            } catch {
                pipeline.condition.withLock { pipeline.workersRunning -= 1 }
            }
        }
        guard started > 0 else {
            let produce = producer(0)
            for index in 0..<count { try consume(produce(index)) }
            return
        }
        try pipeline.handOver(to: consume)
    }

    /// A worker: takes the next item while the window has room, produces its result, puts it in its slot. A worker
    /// that finds the first item taken and its result not made waits for it, `leadTime` at most.
    private func work(worker: Int) {
        let produce = producer(worker)
        condition.lock()
        if nextToTake > 0 && !firstMade {
            let deadline = Deadline(after: leadTime)
            while !firstMade && !stopped && condition.wait(until: deadline) {}
            firstMade = true
        }
        while true {
            while !stopped && nextToTake < count && nextToTake - consumed >= window {
                workersWaiting += 1
                wakeConsumerIfDue()
                condition.wait()
                workersWaiting -= 1
            }
            guard !stopped && nextToTake < count else { break }
            let index = nextToTake
            nextToTake += 1
            condition.unlock()
            let output = produce(index)
            condition.lock()
            slots[index % window] = output
            ready += 1
            if !firstMade {
                firstMade = true
                condition.broadcast()
            }
            wakeConsumerIfDue()
        }
        workersRunning -= 1
        if consumerWaiting { condition.broadcast() }
        condition.unlock()
    }

    /// Whether the calling thread has enough to take: the next result in order, and more behind it or nothing
    /// more to wait for. Called with the lock held.
    private var consumerDue: Bool {
        slots[nextToHand % window] != nil && (2 * ready >= window || workersWaiting > 0 || nextToTake == count)
    }

    private func wakeConsumerIfDue() {
        if consumerWaiting && consumerDue { condition.broadcast() }
    }

    /// The calling thread: takes the results that are ready, in order, and consumes them outside the lock.
    private func handOver<Failure: Error>(to consume: (Output) throws(Failure) -> Void) throws(Failure) {
        var taken: [Output] = []
        taken.reserveCapacity(window)
        condition.lock()
        defer {
            while workersRunning > 0 {
                consumerWaiting = true
                condition.wait()
                consumerWaiting = false
            }
            condition.unlock()
        }
        while consumed < count {
            while !consumerDue {
                consumerWaiting = true
                condition.wait()
                consumerWaiting = false
            }
            while nextToHand < count, let output = slots[nextToHand % window].take() {
                taken.append(output)
                nextToHand += 1
                ready -= 1
            }
            condition.unlock()
            do {
                for output in taken { try consume(output) }
            } catch {
                condition.lock()
                stopped = true
                condition.broadcast()
                throw error
            }
            taken.removeAll(keepingCapacity: true)
            condition.lock()
            consumed = nextToHand
            if workersWaiting > 0 { condition.broadcast() }
        }
    }
}
