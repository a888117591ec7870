import Entitlements
import Foundation
import ReceiptCrypto
import ReceiptJWS
import ReceiptModel
import ReceiptService
import ReceiptSigner
import StrictJSON

/// A service that answers Apple's App Store Server API for `com.example.game`, signing with an `apple-compatible`
/// development chain (so Apple's own verifier accepts its signed data), with one API key; and Apple's Python
/// `app-store-server-library` as its client (`Clients/store_api_client.py`, on the project's virtual environment).
struct StoreAPIFixture {
    static let bundleID = "com.example.game"
    static let appAppleID: Int64 = 1_234_567_890
    static let issuerID = "57246542-96fe-1a63-e053-0824d011072a"
    static let keyID = "ABC123DEFG"
    static let catalog = """
        {"bundle_id": "com.example.game", "products": [
          {"id": "com.example.pro.monthly", "type": "auto_renewable", "entitlements": ["pro"], "group": "pro",
           "rank": 1, "subscription_group_identifier": "20652543"},
          {"id": "com.example.removeads", "type": "non_consumable", "entitlements": ["no_ads"]},
          {"id": "com.example.coins100", "type": "consumable", "entitlements": ["coins"], "amount": 100}
        ]}
        """
    static let chain: DevelopmentChain = {
        do {
            return try DevelopmentChain.create(algorithm: .ecP256, profile: .appleCompatible)
        } catch {
            preconditionFailure("an apple-compatible development chain could not be created: \(error)")
        }
    }()
    static let apiKey: PrivateKey = {
        do {
            return try PrivateKey.generate(.ecP256)
        } catch {
            preconditionFailure("an API key could not be generated: \(error)")
        }
    }()

    let service: ServiceFixture

    /// The service over a new ledger of the kind `ledger`; `notificationURLs` are the app's, `adjust` changes the
    /// configuration last.
    init(
        _ ledger: LedgerKind = .sqlite, notificationURLs: [String] = [],
        adjust: (inout ServiceConfiguration) -> Void = { _ in }
    ) throws {
        let catalog = try Catalog(json: Array(Self.catalog.utf8))
        let signer = try JWSSigner(
            key: Self.chain.signerKey, chain: [Self.chain.signer, Self.chain.intermediate, Self.chain.root])
        let key = try APIKey(
            issuerID: Self.issuerID, keyID: Self.keyID,
            publicKey: PublicKey(pemOrDER: Array(Self.apiKey.publicKeyPEM.utf8)))
        let api = ServiceConfiguration.StoreAPI(
            apps: [
                .init(
                    bundleID: Self.bundleID, appAppleID: Self.appAppleID, catalog: catalog,
                    notificationURLs: notificationURLs, storefront: "USA", storefrontID: "143441")
            ], keys: [key], notificationRetrySeconds: [1, 1], signer: signer)
        var failure: Error?
        service = try ServiceFixture { configuration in
            do {
                try ledger.apply(to: &configuration)
            } catch {
                failure = error
            }
            configuration.catalogs = ["game": catalog]
            configuration.storeAPI = api
            adjust(&configuration)
        }
        if let failure { throw failure }
        try Data(Self.apiKey.pkcs8PEM.utf8).write(to: service.directory.appendingPathComponent("api-key.pem"))
        try Data(Self.chain.root.derEncoded).write(to: service.directory.appendingPathComponent("root.der"))
    }

    /// Records `json` (a purchase with customer_id and bundle_id) through `POST /v1/transactions`.
    @discardableResult
    func record(_ json: String) throws -> HTTPReply {
        let reply = try service.post("/v1/transactions", json: json)
        guard reply.status == 200 || reply.status == 201 else {
            throw FixtureError("recording failed: \(reply.status) \(reply.text)")
        }
        return reply
    }

    /// A purchase body for `customer`: `product`, `id`, bought on day `day` after 2024-06-01, with `extra`
    /// members (`"expires_date_ms": …`).
    static func purchase(
        _ customer: String, _ product: String, _ id: String, day: Int, extra: String = ""
    ) -> String {
        let date = 1_717_200_000_000 + Int64(day) * 86_400_000
        return """
            {"customer_id": "\(customer)", "bundle_id": "\(bundleID)", "product_id": "\(product)",
             "transaction_id": "\(id)", "purchase_date_ms": \(date)\(extra.isEmpty ? "" : ", " + extra)}
            """
    }

    /// Runs Apple's client with `calls` and returns one result per call.
    func client(_ calls: [JSONValue]) throws -> [JSONValue] {
        let python = PythonClientTests.python
        guard FileManager.default.isExecutableFile(atPath: python.path) else {
            throw FixtureError("no project Python at \(python.path): run .ci/setup --tests")
        }
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Clients/store_api_client.py")
        let spec = JSONValue.object(
            JSONObject([
                "base_url": .string(service.baseURL),
                "private_key": .string(service.directory.appendingPathComponent("api-key.pem").path),
                "key_id": .string(Self.keyID), "issuer_id": .string(Self.issuerID),
                "bundle_id": .string(Self.bundleID), "app_apple_id": .integer(Self.appAppleID),
                "root": .string(service.directory.appendingPathComponent("root.der").path),
                "calls": .array(calls),
            ]))
        let process = Process()
        process.executableURL = python
        process.arguments = [script.path]
        let input = Pipe()
        let output = Pipe()
        let errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        input.fileHandleForWriting.write(Data(spec.serializedBytes()))
        try input.fileHandleForWriting.close()
        let printed = output.fileHandleForReading.readDataToEndOfFile()
        let complaint = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw FixtureError("Apple's client failed: \(String(decoding: complaint, as: UTF8.self))")
        }
        guard case .array(let results) = try JSONValue(parsing: [UInt8](printed)), results.count == calls.count else {
            throw FixtureError("Apple's client printed \(String(decoding: printed, as: UTF8.self))")
        }
        return results
    }

    /// One call for ``client(_:)``: `name` with `arguments`.
    static func request(_ name: String, _ arguments: [String: JSONValue] = [:]) -> JSONValue {
        var object = JSONObject(["call": .string(name)])
        for (key, value) in arguments.sorted(by: { $0.key < $1.key }) { object[key] = value }
        return .object(object)
    }

    /// One call of Apple's client.
    func call(_ name: String, _ arguments: [String: JSONValue] = [:]) throws -> JSONValue {
        try client([Self.request(name, arguments)])[0]
    }

    /// A token signed by the fixture's API key.
    static func token(bundleID: String = bundleID, issuedAt: ReceiptDate? = nil, expires: ReceiptDate) throws
        -> String
    {
        try APITokenSigner(key: apiKey, keyID: keyID, issuerID: issuerID).token(
            bundleID: bundleID, issuedAt: issuedAt, expires: expires)
    }
}
