import Foundation
import ReceiptCrypto
import ReceiptDER
import ReceiptJWS
import ReceiptModel
import ReceiptSigner
import StrictJSON
import Testing

@Suite("Signing")
struct SigningTests {
    @Test("a signed transaction verifies back to the purchase it was made from")
    func transactionRoundTrip() throws {
        let chain = try Fresh.chain.get()
        let purchase = Fresh.subscription
        let transaction = try Vectors.verifier(chain.root).verifyTransaction(
            Array(Fresh.transaction().utf8),
            expecting: JWSExpectations(bundleID: "com.example.game", environment: .sandbox))
        #expect(transaction.transactionID == purchase.transactionID)
        #expect(transaction.originalTransactionID == purchase.originalTransactionID)
        #expect(transaction.webOrderLineItemID == "2000000123357229")
        #expect(transaction.bundleID == "com.example.game")
        #expect(transaction.productID == purchase.productID)
        #expect(transaction.purchaseDate == purchase.purchaseDate)
        #expect(transaction.originalPurchaseDate == purchase.originalPurchaseDate)
        #expect(transaction.expiresDate == purchase.expiresDate)
        #expect(transaction.quantity == 1)
        #expect(transaction.type == "Auto-Renewable Subscription")
        #expect(transaction.inAppOwnershipType == "PURCHASED")
        #expect(transaction.signedDate == Fresh.signedDate)
        #expect(transaction.offerType == 1)
        #expect(transaction.environment == "Sandbox")
        #expect(transaction.transactionReason == "RENEWAL")
        #expect(transaction.unknownFields.members.isEmpty)
    }

    @Test("a one-time purchase gets the caller's type, its quantity and its refund date")
    func oneTimePurchase() throws {
        let chain = try Fresh.chain.get()
        let transaction = try Vectors.verifier(chain.root).verifyTransaction(
            Array(Fresh.transaction(Fresh.coins, environment: .production).utf8))
        #expect(transaction.type == "Consumable")
        #expect(transaction.quantity == 3)
        #expect(transaction.originalTransactionID == Fresh.coins.transactionID)
        #expect(transaction.revocationDate == Fresh.coins.cancellationDate)
        #expect(transaction.expiresDate == nil)
        #expect(transaction.transactionReason == "PURCHASE")
        #expect(transaction.environment == "Production")
    }

    @Test("signed renewal info verifies back to the subscription it describes")
    func renewalRoundTrip() throws {
        let chain = try Fresh.chain.get()
        let payload = try SignedRenewalInfo.payload(
            for: Fresh.subscription, environment: .sandbox, signedDate: Fresh.signedDate)
        let signed = try Fresh.signer(chain).sign(payload: payload)
        let renewal = try Vectors.verifier(chain.root).verifyRenewalInfo(Array(signed.utf8))
        #expect(renewal.originalTransactionID == "2000000000000001")
        #expect(renewal.productID == Fresh.subscription.productID)
        #expect(renewal.autoRenewProductID == Fresh.subscription.productID)
        #expect(renewal.autoRenewStatus == 1)
        #expect(renewal.renewalDate == Fresh.subscription.expiresDate)
        #expect(renewal.recentSubscriptionStartDate == Fresh.subscription.originalPurchaseDate)
        #expect(renewal.signedDate == Fresh.signedDate)
        #expect(renewal.json == payload)
    }

    @Test("renewal info needs a subscription")
    func renewalNeedsExpiry() {
        #expect(throws: JWSError.self) {
            try SignedRenewalInfo.payload(for: Fresh.coins, environment: .sandbox, signedDate: Fresh.signedDate)
        }
    }

    @Test("the header is exactly alg and x5c, leaf first, in standard base64")
    func headerShape() throws {
        let chain = try Fresh.chain.get()
        let header = try Vectors.header(Fresh.transaction())
        #expect(header.keys == ["alg", "x5c"])
        #expect(header["alg"] == .string("ES256"))
        #expect(
            header["x5c"]
                == .array([chain.signer, chain.intermediate, chain.root].map { .string(Base64.encode($0.derEncoded)) }))
    }

    @Test("a key id is written as kid and read back")
    func keyID() throws {
        let chain = try Fresh.chain.get()
        let signer = try JWSSigner(key: chain.signerKey, chain: [chain.signer, chain.intermediate], keyID: "key-1")
        let signed = try signer.sign(payload: JSONObject(["signedDate": .integer(1_717_588_800_000)]))
        #expect(try Vectors.verifier(chain.root).verify(signed).keyID == "key-1")
    }

    @Test("payload members, their order and number text survive signing")
    func payloadPreserved() throws {
        let chain = try Fresh.chain.get()
        let payload = try JSONValue(parsing: #"{"z":1,"signedDate":1717588800000.5,"a":[true,null,"\u00e9"],"n":1e3}"#)
        guard case .object(let object) = payload else { return }
        let verified = try Vectors.verifier(chain.root).verify(Fresh.signer(chain).sign(payload: object))
        #expect(verified.payload == object)
        #expect(verified.validationTime.millisecondsSince1970 == 1_717_588_800_000)
    }

    @Test("the signer refuses an RSA key")
    func rsaKeyRefused() throws {
        let chain = try DevelopmentChain.create(algorithm: .rsa2048)
        #expect(throws: JWSError.self) { try JWSSigner(key: chain.signerKey, chain: [chain.signer]) }
    }

    @Test("the signer refuses a key that is not the leaf's")
    func mismatchedKey() throws {
        let chain = try Fresh.chain.get()
        #expect(throws: JWSError.self) { try JWSSigner(key: chain.intermediateKey, chain: [chain.signer]) }
    }

    @Test("the signer refuses a chain in the wrong order")
    func wrongOrder() throws {
        let chain = try Fresh.chain.get()
        #expect(throws: JWSError.self) {
            try JWSSigner(key: chain.signerKey, chain: [chain.signer, chain.root, chain.intermediate])
        }
    }

    @Test("the signer refuses an issuer with the right name but another key")
    func impostorIssuer() throws {
        let chain = try Fresh.chain.get()
        let other = try DevelopmentChain.create(algorithm: .ecP256)
        #expect(other.root.subject == chain.root.subject)
        #expect(throws: JWSError.self) {
            try JWSSigner(key: chain.signerKey, chain: [chain.signer, chain.intermediate, other.root])
        }
        #expect(
            try JWSSigner(key: chain.signerKey, chain: [chain.signer, chain.intermediate, chain.root]).chain.count == 3)
    }

    @Test("signatures are randomised but always 64 bytes")
    func signatureShape() throws {
        let first = Vectors.parts(try Fresh.transaction())[2]
        let second = Vectors.parts(try Fresh.transaction())[2]
        #expect(first != second)
        #expect(try Base64URL.decode(Array(first.utf8)).count == 64)
    }

    @Test("OpenSSL verifies our signature once it is converted to DER")
    func openSSLVerifiesOurs() throws {
        let chain = try Fresh.chain.get()
        let parts = Vectors.parts(try Fresh.transaction())
        let der = try ES256Signature.der(fromRaw: Base64URL.decode(Array(parts[2].utf8)))
        let scratch = try Scratch()
        try scratch.write(Array(chain.signer.pemEncoded.utf8), to: "leaf.pem")
        try scratch.write(der, to: "signature.der")
        try scratch.write(Array((parts[0] + "." + parts[1]).utf8), to: "input")
        _ = try Scratch.run(
            "/usr/bin/openssl",
            ["x509", "-in", scratch.path("leaf.pem"), "-pubkey", "-noout", "-out", scratch.path("key.pem")])
        let result = try Scratch.run(
            "/usr/bin/openssl",
            [
                "dgst", "-sha256", "-verify", scratch.path("key.pem"), "-signature", scratch.path("signature.der"),
                scratch.path("input"),
            ])
        #expect(result == "Verified OK")
    }

    @Test("a JWS whose signature OpenSSL made verifies once it is converted to r ‖ s")
    func oursVerifiesOpenSSLs() throws {
        let chain = try Fresh.chain.get()
        let header = Vectors.parts(try Fresh.transaction())[0]
        let payload = Base64URL.encode(Array(#"{"signedDate":1717588800000,"by":"openssl"}"#.utf8))
        let scratch = try Scratch()
        try scratch.write(Array(chain.signerKey.pkcs8PEM.utf8), to: "key.pem")
        try scratch.write(Array((header + "." + payload).utf8), to: "input")
        _ = try Scratch.run(
            "/usr/bin/openssl",
            [
                "dgst", "-sha256", "-sign", scratch.path("key.pem"), "-out", scratch.path("signature.der"),
                scratch.path("input"),
            ])
        let der = try scratch.read("signature.der")
        let compact = header + "." + payload + "." + Base64URL.encode(try ES256Signature.raw(fromDER: der))
        #expect(try Vectors.verifier(chain.root).verify(compact).payload["by"] == .string("openssl"))
    }

    @Test("Apple's app-store-server-library accepts our transaction signed with an Apple-compatible chain")
    func appleLibraryAcceptsOurs() throws {
        let python = Scratch.projectPython
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw Scratch.Failed(description: "no project Python at \(python): run .ci/setup --tests")
        }
        guard (try? Scratch.run(python, ["-c", "import appstoreserverlibrary"])) != nil else {
            throw Scratch.Failed(
                description: "Apple's app-store-server-library is missing from .venv: run .ci/setup --tests")
        }
        let chain = try Fresh.appleLikeChain.get()
        let compact = try Fresh.signer(chain).sign(
            payload: SignedTransaction.payload(
                for: Fresh.subscription, bundleID: "com.example.game", environment: .sandbox,
                signedDate: Fresh.signedDate))
        let scratch = try Scratch()
        try scratch.write(chain.root.derEncoded, to: "root.der")
        try scratch.write(Array(compact.utf8), to: "transaction.jws")
        try scratch.write(
            Array(
                """
                import sys
                from appstoreserverlibrary.models.Environment import Environment
                from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier
                root = open(sys.argv[1], 'rb').read()
                verifier = SignedDataVerifier([root], False, Environment.SANDBOX, 'com.example.game')
                transaction = verifier.verify_and_decode_signed_transaction(open(sys.argv[2]).read())
                print(transaction.transactionId, transaction.productId, transaction.expiresDate)
                """.utf8), to: "check.py")
        let output = try Scratch.run(
            python, [scratch.path("check.py"), scratch.path("root.der"), scratch.path("transaction.jws")])
        #expect(output == "2000000000000002 com.example.pro.monthly 1719824400000")
    }
}

/// A scratch directory for files handed to `openssl` and `python3`, removed when released.
final class Scratch {
    struct Failed: Error, CustomStringConvertible {
        let description: String
    }

    /// The interpreter of the project's virtual environment, `.venv/bin/python3` at the package root (this file is
    /// Tests/ReceiptJWSTests/SigningTests.swift), which `.ci/setup --tests` makes.
    static let projectPython = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(".venv/bin/python3").path

    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("jws-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    func write(_ bytes: [UInt8], to name: String) throws {
        try Data(bytes).write(to: directory.appendingPathComponent(name))
    }

    func read(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: directory.appendingPathComponent(name)))
    }

    /// Runs a program to completion; its standard output, trimmed, or an error with its standard error.
    static func run(_ executable: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let errorData = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failed(
                description: "\(arguments.first ?? executable) exited \(process.terminationStatus): "
                    + String(decoding: errorData, as: UTF8.self))
        }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
