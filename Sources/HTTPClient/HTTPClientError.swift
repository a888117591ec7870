/// Why an ``HTTPClient`` request did not produce a response.
///
/// A response with any status code (500 included) is not an error: it is returned. The codes are chosen so that a
/// caller can map them onto App Store Server Notifications' `sendAttemptResult` values.
public struct HTTPClientError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is; stable, for callers to switch on.
    public enum Code: Sendable, Hashable {
        /// The URL is not one this client speaks to (`https`, user information, a fragment, a bad port or host);
        /// nothing was sent. The message names the rule and the URL.
        case unsupportedURL
        /// The request itself cannot be written as HTTP/1.1: a header name or value the caller gave is not valid,
        /// or sets a header the client writes itself. Nothing was sent.
        case invalidRequest
        /// The whole-request deadline passed (while connecting, sending or reading the response).
        case timedOut
        /// No connection could be made: the host name did not resolve, or every address refused or was
        /// unreachable, or a socket call failed (`SOCKET_ISSUE`). The message names the host and port and carries
        /// the system's reason.
        case connectionFailed
        /// The receiver closed the connection before sending a single byte of a response (`NO_RESPONSE`).
        case noResponse
        /// The receiver closed the connection after part of a response, before it was complete
        /// (`PREMATURE_CLOSE`).
        case prematureClose
        /// The receiver's bytes are not a well-formed HTTP/1.x response, or its framing is ambiguous
        /// (`INVALID_RESPONSE`). The message names the rule broken.
        case invalidResponse
    }

    /// What kind of failure this is.
    public var code: Code
    /// A sentence for people, naming the host and port, the URL or the rule involved.
    public var message: String

    /// Creates an error with its code and message.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The message, for people and logs (switch on ``code`` in programs).
    public var description: String { message }
}
