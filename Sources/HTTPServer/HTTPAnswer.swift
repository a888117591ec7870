private import Dispatch
internal import Synchronization
private import Threads

/// What a handler gives back for a request: its response now, the promise of one, or the work that finds it by
/// waiting.
public enum HTTPAnswer: Sendable {
    /// The response, sent at once.
    case response(HTTPResponse)
    /// The response comes later: the server sets the connection aside, its thread serving other connections
    /// meanwhile, and calls the function with the ``HTTPResponder`` that sends it, from any thread, once it is
    /// known (after a commit, say). The function must not wait for the response itself.
    case later(@Sendable (HTTPResponder) -> Void)
    /// The answer is what the function returns, and the function mostly waits (for a commit, another server)
    /// rather than computes: the server sets the connection aside and runs it on one of
    /// ``HTTPServerConfiguration/waitingThreads`` threads, so that its own threads serve other connections
    /// meanwhile. What the function returns is answered as any other answer, there.
    case waiting(@Sendable () -> HTTPAnswer)
}

extension HTTPAnswer {
    /// The response this answer comes to, waited for on the calling thread: a waiting answer's work runs here, and
    /// a later answer's function gets a responder whose response is made here once it is given (500
    /// `internal_error` if the responder is let go of without one).
    public func waitForResponse() -> HTTPResponse {
        switch self {
        case .response(let response): return response
        case .waiting(let work): return work().waitForResponse()
        case .later(let start):
            let handoff = ResponseHandoff()
            start(HTTPResponder { handoff.give($0) })
            return handoff.taken()
        }
    }
}

/// How a response given on one thread reaches the one thread waiting for it.
private final class ResponseHandoff: Sendable {
    private let response = Mutex<HTTPResponder.Making?>(nil)
    private let given = DispatchSemaphore(value: 0)

    func give(_ make: @escaping HTTPResponder.Making) {
        response.withLock { $0 = make }
        given.signal()
    }

    /// The response, made on the waiting thread.
    func taken() -> HTTPResponse {
        given.wait()
        return response.withLock { $0 }?() ?? internalError("the handler gave no response")
    }
}

/// Sends the response of one request answered ``HTTPAnswer/later(_:)``, from any thread. The first response given
/// counts and later ones are ignored; a responder let go of without a response sends a 500 (`internal_error`), so
/// that no connection is left waiting.
public final class HTTPResponder: Sendable {
    /// Makes a response where it is sent.
    public typealias Making = @Sendable () -> HTTPResponse

    private let deliver: Mutex<(@Sendable (@escaping Making) -> Void)?>

    /// A responder that hands the function making the response to `deliver`, once.
    public init(delivering deliver: @escaping @Sendable (@escaping Making) -> Void) {
        self.deliver = Mutex(deliver)
    }

    /// Sends `response`, unless a response was sent already.
    public func respond(_ response: HTTPResponse) {
        respond(making: { response })
    }

    /// Sends the response `make` returns, called on the server's thread that sends it (or, with a responder made
    /// by ``init(delivering:)``, wherever its `deliver` calls it), unless a response was sent already: a thread
    /// that completes many requests in turn, such as a ledger's committer, hands each one over without making it.
    public func respond(making make: @escaping Making) {
        let deliver = deliver.withLock { (deliver) -> (@Sendable (@escaping Making) -> Void)? in
            defer { deliver = nil }
            return deliver
        }
        deliver?(make)
    }

    deinit {
        respond(internalError("the handler gave no response"))
    }
}

/// Counts the responders handed out and not yet used, so that the server stops only once every connection set
/// aside has its response.
///
/// `@unchecked Sendable`: `count` is only read or written while `condition` is locked.
final class PendingAnswers: @unchecked Sendable {
    private let condition = Condition()
    private var count = 0

    /// A responder that sends through `deliver`, counted until it has.
    func responder(delivering deliver: @escaping @Sendable (@escaping HTTPResponder.Making) -> Void) -> HTTPResponder {
        condition.lock()
        count += 1
        condition.unlock()
        return HTTPResponder { [self] make in
            deliver(make)
            condition.lock()
            count -= 1
            if count == 0 { condition.broadcast() }
            condition.unlock()
        }
    }

    /// Returns once every responder handed out has sent its response.
    func waitForAll() {
        condition.lock()
        while count > 0 {
            condition.wait()
        }
        condition.unlock()
    }
}
