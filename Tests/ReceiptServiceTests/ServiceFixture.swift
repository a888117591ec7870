import Foundation
import ReceiptCrypto
import ReceiptLedger
import ReceiptModel
import ReceiptService
import ReceiptSigner
import StrictJSON

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A fresh directory with a development chain written as PEM files, and a server over a ledger in it.
final class ServiceFixture: @unchecked Sendable {
    static let token = "test-token-0123456789abcdef0123456789abcdef"
    static let chain: DevelopmentChain = {
        do {
            return try DevelopmentChain.create(algorithm: .ecP256)
        } catch {
            preconditionFailure("a development chain could not be created: \(error)")
        }
    }()

    let directory: URL
    let server: ReceiptServer
    let logs = LogLines()
    /// Where the server's ledger is (the configuration's `ledger`).
    let ledgerPath: String

    /// Starts a server on an ephemeral loopback port; `adjust` changes the configuration first.
    init(_ adjust: (inout ServiceConfiguration) -> Void = { _ in }) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("service-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var configuration = ServiceConfiguration(
            port: 0, environment: .production, ledgerPath: directory.appendingPathComponent("ledger.sqlite").path,
            trustAnchors: [Self.chain.root], signer: ReceiptSigner(credentials: try Self.chain.credentials),
            tokens: [Self.token])
        adjust(&configuration)
        ledgerPath = configuration.ledgerPath
        let logs = logs
        server = try ReceiptServer(configuration: configuration, log: { logs.append($0) })
        try server.start()
    }

    deinit {
        server.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    var baseURL: String { "http://127.0.0.1:\(server.port)" }

    /// Sends one request with a real HTTP client and waits for the whole response.
    func send(
        _ method: String, _ path: String, body: [UInt8]? = nil, token: String? = ServiceFixture.token,
        headers: [String: String] = [:]
    ) throws -> HTTPReply {
        guard let url = URL(string: baseURL + path) else { throw FixtureError("bad URL \(path)") }
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.httpBody = body.map { Data($0) }
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        return try HTTPReply.fetch(request)
    }

    /// `send` with a JSON body.
    func post(_ path: String, json: String, token: String? = ServiceFixture.token) throws -> HTTPReply {
        try send("POST", path, body: Array(json.utf8), token: token, headers: ["Content-Type": "application/json"])
    }

    /// A receipt signed by the development chain.
    static func signed(_ receipt: Receipt) throws -> [UInt8] {
        try ReceiptSigner(credentials: chain.credentials).sign(receipt)
    }

    /// A verifyReceipt request body for `receipt`.
    static func verifyRequest(_ receipt: [UInt8], extra: String = "") -> String {
        #"{"receipt-data":"\#(Data(receipt).base64EncodedString())"\#(extra)}"#
    }
}

/// What came back: status, headers (names lowercased) and body.
struct HTTPReply: Sendable {
    let status: Int
    let headers: [String: String]
    let body: [UInt8]

    var text: String { String(decoding: body, as: UTF8.self) }

    func json() throws -> JSONValue { try JSONValue(parsing: body) }

    /// The response's `error.code`, if it has one.
    var errorCode: String? {
        guard case .string(let code)? = (try? json())?["error"]?["code"] else { return nil }
        return code
    }

    /// Sends `request` and waits for the response; without `followingRedirects`, a redirect is the answer and
    /// cookies are neither stored nor sent but for a `Cookie` header the request has.
    static func fetch(_ request: URLRequest, followingRedirects: Bool = true) throws -> HTTPReply {
        let box = ReplyBox()
        let done = DispatchSemaphore(value: 0)
        let configuration = URLSessionConfiguration.ephemeral
        if !followingRedirects { configuration.httpShouldSetCookies = false }
        let session = URLSession(
            configuration: configuration, delegate: followingRedirects ? nil : RedirectRefusal(), delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        session.dataTask(with: request) { data, response, error in
            box.set(data: data, response: response as? HTTPURLResponse, error: error)
            done.signal()
        }.resume()
        guard done.wait(timeout: .now() + 60) == .success else { throw FixtureError("no response within 60 s") }
        return try box.reply()
    }
}

/// Answers every redirect with "do not follow": the redirect is then the response.
private final class RedirectRefusal: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}

/// Hands a URLSession completion to the waiting test thread.
private final class ReplyBox: @unchecked Sendable {
    private let lock = NSLock()
    private var data: Data?
    private var response: HTTPURLResponse?
    private var error: Error?

    func set(data: Data?, response: HTTPURLResponse?, error: Error?) {
        lock.withLock {
            self.data = data
            self.response = response
            self.error = error
        }
    }

    func reply() throws -> HTTPReply {
        try lock.withLock {
            if let error { throw error }
            guard let response else { throw FixtureError("no HTTP response") }
            var headers: [String: String] = [:]
            for (name, value) in response.allHeaderFields {
                headers[String(describing: name).lowercased()] = String(describing: value)
            }
            return HTTPReply(status: response.statusCode, headers: headers, body: [UInt8](data ?? Data()))
        }
    }
}

/// The log lines a server wrote.
final class LogLines: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []

    func append(_ line: String) { lock.withLock { lines.append(line) } }
    var all: [String] { lock.withLock { lines } }
}

struct FixtureError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A small receipt for `bundleID`, with purchases made at the given days after 2024-06-01, each its own original
/// transaction as in Apple's receipts.
func sampleReceipt(
    bundleID: String = "com.example.game", type: String? = "Production", purchases: [(String, String, Int)]
) -> Receipt {
    let start: Int64 = 1_717_200_000_000
    let day: Int64 = 86_400_000
    return Receipt(
        bundleID: bundleID, creationDate: ReceiptDate(millisecondsSince1970: start + 30 * day), receiptType: type,
        inAppPurchases: purchases.map { product, transaction, offset in
            InAppPurchase(
                productID: product, transactionID: transaction,
                purchaseDate: ReceiptDate(millisecondsSince1970: start + Int64(offset) * day),
                originalTransactionID: transaction,
                originalPurchaseDate: ReceiptDate(millisecondsSince1970: start + Int64(offset) * day))
        })
}
