import Foundation
import PurchaseVerifier
import ReceiptCrypto
import StrictJSON
import Testing

/// The repository's test folders, read directly (the vectors belong to the suites beside them).
private enum Repository {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func bytes(_ path: String) throws -> [UInt8] {
        Array(try Data(contentsOf: root.appendingPathComponent(path)))
    }

    static func certificate(_ path: String) throws -> Certificate {
        try Certificate(derEncoded: bytes(path))
    }

    /// The entries of a vectors manifest under `key`.
    static func manifest(_ path: String, _ key: String) -> [JSONObject] {
        guard let bytes = try? Repository.bytes(path), case .array(let entries)? = try? JSONValue(parsing: bytes)[key]
        else { return [] }
        return entries.compactMap { if case .object(let object) = $0 { object } else { nil } }
    }

    static let legacy = "Tests/LegacyReceiptTests/Vectors/"
    static let appReceipts = "Tests/ReceiptVerifierTests/Vectors/real/"
    static let jws = "Tests/ReceiptJWSTests/Vectors/"

    static let legacyFiles: [String] = manifest(legacy + "manifest.json", "receipts").flatMap { entry in
        [entry["file"], entry["plist"]].compactMap { if case .string(let file)? = $0 { legacy + file } else { nil } }
    }
    static let appReceiptFiles: [String] = manifest(appReceipts + "manifest.json", "receipts").flatMap { entry in
        [entry["file"], entry["base64_file"]].compactMap {
            if case .string(let file)? = $0 { appReceipts + file } else { nil }
        }
    }
}

@Suite("Format detection decides by what the bytes are, not by how they start")
struct FormatDetectionTests {
    @Test("the vectors are all found: 7 iOS 6 receipts in two forms, 23 app receipts in one or two")
    func vectorsFound() {
        #expect(Repository.legacyFiles.count == 14)
        #expect(Repository.appReceiptFiles.count > 23)
    }

    @Test(
        "every real iOS 6 receipt, as base64 and as its plist, is an iOS 6 receipt", arguments: Repository.legacyFiles)
    func legacyVectors(path: String) throws {
        #expect(PurchaseProofFormat.detect(try Repository.bytes(path)) == .legacyTransactionReceipt)
    }

    @Test("every real app receipt, as DER and as base64, is an app receipt", arguments: Repository.appReceiptFiles)
    func appReceiptVectors(path: String) throws {
        #expect(PurchaseProofFormat.detect(try Repository.bytes(path)) == .appReceipt)
    }

    @Test(
        "real StoreKit 2 signed data is jws and a real notification body is server_notification",
        arguments: [
            ("mingos-assa/sandbox-transaction.jws", PurchaseProofFormat.signedData),
            ("go-iap/signed-renewal-info.jws", .signedData),
            ("apple-assl/xcode/xcode-signed-app-transaction.jws", .signedData),
            ("aporat/test-notification-signed-payload.json", .serverNotification),
        ])
    func jwsVectors(path: String, format: PurchaseProofFormat) throws {
        #expect(PurchaseProofFormat.detect(try Repository.bytes(Repository.jws + path)) == format)
    }

    @Test("RevenueCat's iOS 6 receipt whose base64 starts eyJ, like a JWS header, verifies as an iOS 6 receipt")
    func plistWithoutLeadingNewline() throws {
        let input = try Repository.bytes(Repository.legacy + "revenuecat/base64encoded_unsupportedReceipt2.txt")
        #expect(input.starts(with: Array("eyJ".utf8)))
        let verifier = try PurchaseVerifier(
            trustAnchors: [Repository.certificate("certs/apple/AppleIncRootCertificate.cer")],
            intermediates: [Repository.certificate("certs/apple/AppleITunesStoreCertificationAuthority.cer")])
        guard case .legacyTransactionReceipt(let verified) = try verifier.verify(input) else {
            Issue.record("not verified as an iOS 6 receipt")
            return
        }
        #expect(verified.purchaseInfo.bundleID == "com.es.Purchaser")
    }

    @Test("a proof verified as another format than its own fails as that format")
    func verifiedAsAnotherFormat() throws {
        let input = try Repository.bytes(Repository.appReceipts + "tpinappreceipt/receipt-production.b64")
        let verifier = try PurchaseVerifier(
            trustAnchors: [Repository.certificate("certs/apple/AppleIncRootCertificate.cer")])
        let error = #expect(throws: PurchaseProofError.self) { try verifier.verify(input, as: .signedData) }
        guard case .signedData? = error else {
            Issue.record("failed as \(String(describing: error)), not as signed data")
            return
        }
    }

    @Test("line breaks and leading spaces in base64 do not change what it decodes to")
    func whitespaceInBase64() throws {
        let text = try Repository.bytes(Repository.legacy + "revenuecat/base64encoded_unsupportedReceipt2.txt")
        var wrapped: [UInt8] = Array("  \r\n".utf8)
        for (index, byte) in text.enumerated() {
            if index % 3 == 0 { wrapped += Array(" \n".utf8) }
            wrapped.append(byte)
        }
        #expect(PurchaseProofFormat.detect(wrapped) == .legacyTransactionReceipt)
        let receipt = try Repository.bytes(Repository.appReceipts + "tpinappreceipt/receipt-production.b64")
        #expect(PurchaseProofFormat.detect(Array("\n  ".utf8) + receipt) == .appReceipt)
    }

    @Test(
        "JSON that is no notification body, and PEM text, are no purchase proof, and the error says what they are",
        arguments: [
            (#"{"receipt-data": "MIIT", "password": "x"}"#, "a JSON object with keys receipt-data, password"),
            ("[1, 2]", "JSON (an array)"),
            ("{}", "an empty JSON object"),
            ("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n", "a PEM certificate"),
            (
                "-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n",
                "PEM block (-----BEGIN PRIVATE KEY-----)"
            ),
        ])
    func unrecognized(text: String, described: String) throws {
        let input = Array(text.utf8)
        #expect(PurchaseProofFormat.detect(input) == .unrecognized)
        let verifier = try PurchaseVerifier(
            trustAnchors: [Repository.certificate("certs/apple/AppleIncRootCertificate.cer")])
        let error = #expect(throws: PurchaseProofError.self) { try verifier.verify(input) }
        #expect(error?.code == "not_a_purchase_proof")
        #expect(error?.status == 21002)
        #expect(error?.message.contains(described) == true, "\(error?.message ?? "")")
    }
}
