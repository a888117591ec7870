import Foundation
import LegacyReceipt
import PropertyList
import ReceiptCrypto
import ReceiptDER
import ReceiptModel
import StrictJSON
import Testing

struct MissingVector: Error, CustomStringConvertible {
    let path: String
    var description: String { "test vector \(path) is missing" }
}

/// Test vectors stored as files beside the tests (see Vectors/SOURCES.md for provenance), and the certificates
/// this checkout ships in `certs/apple/`.
enum Vectors {
    static func bytes(_ relativePath: String) throws -> [UInt8] {
        var components = ("Vectors/" + relativePath).split(separator: "/").map(String.init)
        let name = components.removeLast()
        let directory = components.joined(separator: "/")
        guard let url = Bundle.module.url(forResource: name, withExtension: nil, subdirectory: directory) else {
            throw MissingVector(path: relativePath)
        }
        return Array(try Data(contentsOf: url))
    }

    static let appleCertificates = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("certs/apple")

    /// A certificate from `certs/apple/`.
    static func apple(_ name: String) throws -> Certificate {
        try Certificate(derEncoded: Array(Data(contentsOf: appleCertificates.appendingPathComponent(name))))
    }

    static let appleRoot = "AppleIncRootCertificate.cer"
    static let iTunesStoreCA = "AppleITunesStoreCertificationAuthority.cer"
    static let wwdrCA = "AppleWWDRCA.cer"

    /// Apple Inc. Root pinned, both legacy intermediates offered: what a server verifying these receipts uses.
    static func appleVerifier(
        anchor: String = appleRoot,
        intermediates: [String] = [iTunesStoreCA, wwdrCA]
    ) throws -> LegacyReceiptVerifier {
        try LegacyReceiptVerifier(trustAnchors: [apple(anchor)], intermediates: intermediates.map(apple))
    }
}

/// One real receipt from `Vectors/manifest.json`.
struct LegacyVector: CustomTestStringConvertible, Sendable {
    let entry: JSONObject

    var file: String { entry["file"]?.stringValue ?? "" }
    var plist: String { entry["plist"]?.stringValue ?? "" }
    var testDescription: String { file }

    static let manifest: JSONValue = (try? JSONValue(parsing: Vectors.bytes("manifest.json"))) ?? .null
    static let all: [LegacyVector] = {
        guard case .array(let receipts)? = manifest["receipts"] else { return [] }
        return receipts.compactMap { value in
            guard case .object(let object) = value else { return nil }
            return LegacyVector(entry: object)
        }
    }()

    static func named(_ file: String) throws -> LegacyVector {
        try #require(all.first { $0.file == file })
    }

    func bytes() throws -> [UInt8] { try Vectors.bytes(file) }
    func receipt() throws -> LegacyTransactionReceipt { try LegacyTransactionReceipt(parsing: bytes()) }

    func integer(_ key: String) -> Int64? { entry[key]?.integerValue }
    func string(_ key: String) -> String? { entry[key]?.stringValue }

    /// The purchase-info keys and values in the order the manifest lists them.
    var purchaseInfo: [(key: String, value: String)] {
        guard case .object(let object)? = entry["purchase_info"] else { return [] }
        return object.members.map { ($0.key, $0.value.stringValue ?? "") }
    }
}

extension JSONValue {
    var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    var integerValue: Int64? {
        if case .number(let text) = self { return Int64(text) }
        return nil
    }
}

/// The ``LegacyReceiptError`` `body` throws, or nil when it succeeds; any other error is recorded as an issue (a
/// missing vector, say).
func legacyError<T>(
    _ body: () throws -> T,
    sourceLocation: SourceLocation = #_sourceLocation
) -> LegacyReceiptError? {
    do {
        _ = try body()
        return nil
    } catch let error as LegacyReceiptError {
        return error
    } catch {
        Issue.record(error, sourceLocation: sourceLocation)
        return nil
    }
}

/// `receipt`'s top-level fields written again as a property list, with `key` set to `value` (appended when new,
/// removed when nil).
func rewritten(_ receipt: LegacyTransactionReceipt, setting key: String, to value: String?) -> [UInt8] {
    var fields = PropertyListDictionary()
    for entry in receipt.fields where entry.key != key { fields.insert(key: entry.key, value: entry.value) }
    if let value { fields.insert(key: key, value: .string(value)) }
    return PropertyListValue.dictionary(fields).openStepText
}

/// `receipt` with its signature blob or purchase info replaced by other bytes.
func rewritten(_ receipt: LegacyTransactionReceipt, signature: [UInt8]? = nil, purchaseInfo: [UInt8]? = nil)
    -> [UInt8]
{
    var fields = PropertyListDictionary()
    for entry in receipt.fields {
        switch entry.key {
        case "signature" where signature != nil:
            fields.insert(key: entry.key, value: .string(Base64.encode(signature ?? [])))
        case "purchase-info" where purchaseInfo != nil:
            fields.insert(key: entry.key, value: .string(Base64.encode(purchaseInfo ?? [])))
        default:
            fields.insert(key: entry.key, value: entry.value)
        }
    }
    return PropertyListValue.dictionary(fields).openStepText
}

/// A signature blob: version ‖ signature ‖ certificate length (4 bytes, big-endian) ‖ certificate.
func signatureBlob(version: UInt8, signature: [UInt8], certificate: [UInt8]) -> [UInt8] {
    let length = UInt32(certificate.count)
    return [version] + signature + [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: length >> $0) } + certificate
}

/// A throw-away chain (root → intermediate → leaf) for signing legacy receipts in tests.
struct TestChain: Sendable {
    let root: Certificate
    let intermediate: Certificate
    let leaf: Certificate
    let leafKey: PrivateKey

    static let validity: (notBefore: Int64, notAfter: Int64) = (946_684_800, 4_102_444_800)

    static func make(leafAlgorithm: GeneratedKeyAlgorithm = .rsa2048) throws -> TestChain {
        let rootKey = try PrivateKey.generate(.ecP256)
        let root = try CertificateIssuer.issue(
            commonName: "Legacy Test Root", organization: "tests", role: .root, subjectKey: rootKey, issuer: nil,
            notBefore: validity.notBefore, notAfter: validity.notAfter)
        let intermediateKey = try PrivateKey.generate(.ecP256)
        let intermediate = try CertificateIssuer.issue(
            commonName: "Legacy Test Intermediate", organization: "tests", role: .intermediate,
            subjectKey: intermediateKey, issuer: (root, rootKey), notBefore: validity.notBefore,
            notAfter: validity.notAfter)
        let leafKey = try PrivateKey.generate(leafAlgorithm)
        let leaf = try CertificateIssuer.issue(
            commonName: "Legacy Test Signer", organization: "tests", role: .signer, subjectKey: leafKey,
            issuer: (intermediate, intermediateKey), notBefore: validity.notBefore, notAfter: validity.notAfter)
        return TestChain(root: root, intermediate: intermediate, leaf: leaf, leafKey: leafKey)
    }

    /// Made once: RSA key generation is slow.
    static let rsa = Result { try make() }

    func verifier() throws -> LegacyReceiptVerifier {
        try LegacyReceiptVerifier(trustAnchors: [root], intermediates: [intermediate])
    }

    static let purchaseInfo = """
        {
        \t"bid" = "com.example.game";
        \t"product-id" = "com.example.coins";
        \t"transaction-id" = "1000000000000001";
        \t"quantity" = "1";
        \t"purchase-date-ms" = "1717588800000";
        }
        """

    /// A legacy receipt (base64) of `purchaseInfo`, signed with SHA-1 by the leaf.
    func receipt(
        purchaseInfo: String = TestChain.purchaseInfo,
        version: UInt8 = 3,
        signingStatus: String = "0",
        certificate: [UInt8]? = nil
    ) throws -> [UInt8] {
        let info = Array(purchaseInfo.utf8)
        let signature = try leafKey.signature(for: [version] + info, digest: .sha1)
        let blob = signatureBlob(version: version, signature: signature, certificate: certificate ?? leaf.derEncoded)
        var fields = PropertyListDictionary()
        fields.insert(key: "signature", value: .string(Base64.encode(blob)))
        fields.insert(key: "purchase-info", value: .string(Base64.encode(info)))
        fields.insert(key: "pod", value: .string("100"))
        fields.insert(key: "signing-status", value: .string(signingStatus))
        return Array(Base64.encode(PropertyListValue.dictionary(fields).openStepText).utf8)
    }
}
