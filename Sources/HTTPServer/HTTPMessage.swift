/// One HTTP request, read completely (the body within the server's size limit).
public struct HTTPRequest: Sendable {
    /// `GET`, `POST`…, as sent.
    public var method: String
    /// The path without its query, percent-decoding left to the handler (`/v1/customers/c%201/receipt`).
    public var path: String
    /// The query arguments in the order sent, names and values percent-decoded.
    public var query: [(name: String, value: String)]
    /// Header fields in the order received, names lowercased.
    public var headers: [(name: String, value: String)]
    /// The body as received (empty when there was none).
    public var body: [UInt8]

    /// A request as the server hands it to its handler.
    public init(
        method: String, path: String, query: [(name: String, value: String)] = [],
        headers: [(name: String, value: String)] = [], body: [UInt8] = []
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
    }

    /// The first value of the header `name` (ASCII letters compared without case, as field names are ASCII).
    public func header(_ name: String) -> String? {
        headers.first { RequestRules.nameMatches(name, lowercaseName: $0.name) }?.value
    }

    /// The first value of the query argument `name`.
    public func queryValue(_ name: String) -> String? {
        query.first { $0.name == name }?.value
    }
}

/// One HTTP response.
public struct HTTPResponse: Sendable {
    /// The status code, 200 to 599.
    public var status: Int
    /// Header fields to send, besides those the server adds (`Content-Length`, `Date`, `Connection`).
    public var headers: [(name: String, value: String)]
    /// The body, sent as it is.
    public var body: [UInt8]

    /// A response with `status`, `headers` and `body`.
    public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}
