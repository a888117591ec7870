/// Why an ``HTTPServer`` could not start.
public struct HTTPServerError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is; stable, for callers to switch on.
    public enum Code: Sendable, Hashable {
        /// A configuration field is out of range; the message names the field.
        case invalidConfiguration
        /// The listening socket could not be created, bound or put in listening mode (for example the port is in
        /// use); the message carries the system's error text.
        case bindFailed
        /// ``HTTPServer/start()`` was called on a server that is already running.
        case alreadyStarted
        /// libmicrohttpd could not be opened (it is loaded when a server first starts), or refused to start its
        /// daemon on the bound socket (for example it could not create its threads).
        case daemonStartFailed
    }

    /// What kind of failure this is.
    public var code: Code
    /// A sentence for people, naming the field, address or rule involved.
    public var message: String

    /// Creates an error with its code and message.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The message, for people and logs (switch on ``code`` in programs).
    public var description: String { message }
}
