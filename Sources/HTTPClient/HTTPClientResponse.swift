/// A complete HTTP response as received: the final (non-1xx) status, its header fields in order, and its body
/// decoded from its framing (Content-Length, chunked, or until the connection closed), up to a bound.
public struct HTTPClientResponse: Sendable {
    /// The status code, 200...599.
    public var status: Int
    /// The header fields in the order received, names as the receiver spelled them, values without surrounding
    /// spaces. Trailer fields of a chunked body are not included.
    public var headers: [(name: String, value: String)]
    /// The body, at most ``HTTPClient/maximumBodyBytes`` bytes of it.
    public var body: [UInt8]
    /// Whether the body was longer than ``HTTPClient/maximumBodyBytes``: ``body`` then holds its first bytes, and
    /// the connection was closed without reading the rest (whose framing was not checked).
    public var isBodyTruncated: Bool

    /// Creates a response.
    public init(status: Int, headers: [(name: String, value: String)], body: [UInt8], isBodyTruncated: Bool) {
        self.status = status
        self.headers = headers
        self.body = body
        self.isBodyTruncated = isBodyTruncated
    }

    /// The value of the first header field called `name` (compared without regard to ASCII case), if any.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
}
