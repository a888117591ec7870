import Entitlements
import Foundation
import ReceiptCrypto
import ReceiptDER
import ReceiptModel
import ReceiptSigner
import ReceiptVerifier
import StrictJSON

/// The properties each fuzz target checks on one input, shared by the libFuzzer targets and the unit test that
/// replays `FailCases/`. Thrown errors are the expected answer to hostile input; a check reports a finding only
/// when an answer is wrong (a crash or hang is found by the fuzzer itself).
public enum FuzzChecks {
    /// For a fuzzer's start, never the tests' process (whose other threads generate keys): certificates' keys read
    /// as `receipt verify` reads them (``OpenSSLStart/readCertificateKeysDirectly()``), so that hostile certificates
    /// reach those readers too, and `FuzzVerify` compares what they read with OpenSSL's own CMS verification, which
    /// reads the same certificates through OpenSSL's decoders.
    public static func readCertificateKeysAsReceiptVerifyDoes() {
        OpenSSLStart.readCertificateKeysDirectly()
    }

    /// Each target's check: nil when every property holds, otherwise what broke.
    public static let targets: [String: @Sendable ([UInt8]) -> String?] = [
        "FuzzDER": der, "FuzzPayload": payload, "FuzzVerify": verify, "FuzzSigningRequest": signingRequest,
        "FuzzCatalog": catalog, "FuzzBase64": base64, "FuzzParsers": parsers,
    ]

    /// DER/BER reader: what parses as DER re-serialises to the same bytes; DER is also BER; making a BER
    /// element's lengths definite gives something the DER reader reads, and doing it twice changes nothing.
    public static func der(_ input: [UInt8]) -> String? {
        if let node = try? ASN1Node.parse(input, rules: .der), let tree = DERTree(node) {
            guard tree.encoded == input else { return "DER input does not re-serialise to the same bytes" }
            guard (try? ASN1Node.parse(input, rules: .ber)) != nil else { return "DER input is not accepted as BER" }
        }
        if let node = try? ASN1Node.parse(input, rules: .ber), let definite = try? node.definiteLengthEncoding() {
            guard let reread = try? ASN1Node.parse(definite, rules: .der) else {
                return "definite-length re-encoding of BER does not read under DER"
            }
            guard let again = try? reread.definiteLengthEncoding(), Array(again) == Array(definite) else {
                return "definite-length re-encoding is not idempotent"
            }
        }
        return nil
    }

    /// Receipt payload parser: a payload that decodes re-encodes to one that decodes to the same receipt.
    public static func payload(_ input: [UInt8]) -> String? {
        guard let receipt = try? Receipt(payload: input[...], maximumPurchases: 1000) else { return nil }
        guard let again = try? Receipt(payload: receipt.payloadDER[...]) else {
            return "re-encoded payload does not decode"
        }
        return again == receipt ? nil : "re-encoded payload decodes to a different receipt"
    }

    /// Whether `input` verifies under the verify target's anchors (for checking that the seed corpus is valid).
    public static func verifies(_ input: [UInt8]) -> Bool {
        (try? Anchors.verifier?.verify(input)) != nil
    }

    /// The whole verify path with fixed anchors, judged against OpenSSL's own CMS_verify, which may be more
    /// lenient than we are but never stricter about signatures and chains:
    /// - a receipt we verify, OpenSSL verifies at the same instant with the same content, and its receipt survives
    ///   re-encoding;
    /// - a signature OpenSSL accepts, we do not call invalid (unless we refuse the algorithm or key pairing, on
    ///   purpose);
    /// - a chain OpenSSL accepts at the receipt's creation date, we do not call untrusted, expired or not yet valid.
    public static func verify(_ input: [UInt8]) -> String? {
        guard let verifier = Anchors.verifier else { return "the verify target's anchors did not load" }
        let der = input.first == 0x30 ? input : ((try? Base64.decode(input)) ?? [])
        let anchors = Anchors.certificates
        let ours = Result { () throws(ReceiptVerificationError) in try verifier.verify(input) }
        if case .success(let verified) = ours {
            switch OpenSSLCMSVerification.verify(der, anchors: anchors, at: verified.validationTime.secondsSince1970) {
            case .verified(let content):
                guard let envelope = try? ReceiptEnvelope(input: input), content == Array(envelope.content) else {
                    return "OpenSSL verified different content than we did"
                }
            case .unparseable: return "we verified a receipt that OpenSSL cannot parse"
            case .rejected(let reason): return "we verified a receipt that OpenSSL rejects: \(reason)"
            }
            guard (try? Receipt(payload: verified.receipt.payloadDER[...])) == verified.receipt else {
                return "a verified receipt does not survive re-encoding"
            }
            return nil
        }
        guard case .failure(let error) = ours, let envelope = try? ReceiptEnvelope(input: input) else { return nil }
        if error.code == .invalidSignature, !error.message.contains("cannot be used with"),
            case .verified = OpenSSLCMSVerification.verify(der, anchors: anchors, at: 0, checkingChain: false)
        {
            return "OpenSSL accepts a signature we call invalid: \(error.message)"
        }
        let chainCodes: Set<ReceiptVerificationError.Code> = [
            .untrustedChain, .certificateExpired, .certificateNotYetValid,
        ]
        if chainCodes.contains(error.code), let created = try? envelope.receipt().creationDate,
            case .verified = OpenSSLCMSVerification.verify(der, anchors: anchors, at: created.secondsSince1970)
        {
            return "OpenSSL accepts a chain we reject: \(error)"
        }
        return nil
    }

    /// Our envelope reader against OpenSSL's CMS parser, everything else being the same verifier: when both
    /// accept, the receipt and chain are the same; we never accept what OpenSSL's path refuses; and OpenSSL's path
    /// accepts nothing we refuse, except where we are stricter by design: BER/DER syntax that OpenSSL relaxes (it
    /// takes chunks of any tag inside a constructed OCTET STRING, X.690 §8.7.3.2 says OCTET STRINGs), algorithm
    /// identifiers and parameters, signed attributes, an algorithm that does not fit the key. Signature, signer,
    /// chain and payload verdicts must agree.
    public static func parsers(_ input: [UInt8]) -> String? {
        guard let verifier = Anchors.verifier else { return "the verify target's anchors did not load" }
        let ours = Result { () throws(ReceiptVerificationError) in try verifier.verify(input) }
        let theirs = Result { () throws(ReceiptVerificationError) in try verifier.verify(input, parser: .openSSL) }
        switch (ours, theirs) {
        case (.success(let ours), .success(let theirs)):
            guard ours.receipt == theirs.receipt, ours.chain.map(\.derEncoded) == theirs.chain.map(\.derEncoded) else {
                return "the two parsers verified different receipts or chains"
            }
            return nil
        case (.success, .failure(let error)): return "we accept what OpenSSL's parser path refuses: \(error)"
        case (.failure(let error), .success):
            return isStricterByDesign(error) ? nil : "OpenSSL's parser path accepts what we refuse: \(error)"
        case (.failure, .failure): return nil
        }
    }

    private static func isStricterByDesign(_ error: ReceiptVerificationError) -> Bool {
        switch error.code {
        case .unsupportedAlgorithm, .invalidSignedAttributes: true
        case .invalidSignature: error.message.contains("cannot be used with")
        case .malformed: true
        default: false
        }
    }

    /// The signer's request JSON: a request that parses describes a receipt whose verifyReceipt JSON and payload
    /// both read back as the same receipt.
    public static func signingRequest(_ input: [UInt8]) -> String? {
        guard let request = try? SigningRequest(json: input) else { return nil }
        let receipt = request.receipt
        guard (try? Receipt(json: .object(receipt.verifyReceiptJSON))) == receipt else {
            return "verifyReceipt JSON of a request does not read back as the same receipt"
        }
        guard (try? Receipt(payload: receipt.payloadDER[...])) == receipt else {
            return "the payload of a request does not decode to the same receipt"
        }
        return nil
    }

    /// The entitlement catalog: a catalog that parses finds each of its products and passes its own validation
    /// again when rebuilt from its values.
    public static func catalog(_ input: [UInt8]) -> String? {
        guard let catalog = try? Catalog(json: input) else { return nil }
        for product in catalog.products where catalog.product(product.id) != product {
            return "product \(product.id) is not found by its id"
        }
        guard
            let rebuilt = try? Catalog(
                products: catalog.products, gracePeriod: catalog.gracePeriod, bundleID: catalog.bundleID),
            rebuilt == catalog
        else { return "a valid catalog fails validation when rebuilt from its values" }
        return nil
    }

    /// Base64 input: what decodes re-encodes to the same text without its whitespace, and a receipt given as
    /// base64 reads exactly as the same receipt given as DER.
    public static func base64(_ input: [UInt8]) -> String? {
        guard let decoded = try? Base64.decode(input) else {
            _ = try? ReceiptEnvelope(input: input)
            return nil
        }
        let stripped = input.filter { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\n") && $0 != UInt8(ascii: "\r") }
        guard Array(Base64.encode(decoded).utf8) == stripped else { return "base64 does not re-encode to its input" }
        guard input.first != 0x30, decoded.first == 0x30 else { return nil }
        let fromText = Result { try ReceiptEnvelope(input: input).receipt() }
        let fromDER = Result { try ReceiptEnvelope(input: decoded).receipt() }
        switch (fromText, fromDER) {
        case (.success(let a), .success(let b)): return a == b ? nil : "base64 and DER forms read differently"
        case (.failure(let a), .failure(let b)):
            return (a as? ReceiptVerificationError)?.code == (b as? ReceiptVerificationError)?.code
                ? nil : "base64 and DER forms fail differently"
        default: return "base64 and DER forms disagree on validity"
        }
    }
}

/// The anchors the verify target pins: the committed development roots, Apple's root and Xcode's StoreKit
/// certificate, so that both our receipts and the real ones in the seed corpus verify.
enum Anchors {
    static let certificates: [Certificate] = {
        let certs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("certs")
        let files = [
            "dev-rsa/root-ca.pem", "dev-ec/root-ca.pem", "apple/AppleIncRootCertificate.cer",
            "xcode/StoreKitTestCertificate.cer",
        ]
        return files.flatMap { file -> [Certificate] in
            guard let data = try? Data(contentsOf: certs.appendingPathComponent(file)) else { return [] }
            return (try? Certificate.load(pemOrDER: Array(data))) ?? []
        }
    }()

    static let verifier: ReceiptVerifier? =
        certificates.count == 4 ? try? ReceiptVerifier(trustAnchors: certificates) : nil
}

/// Any DER element as a tree, re-serialised with ``DERWriter``.
struct DERTree {
    let tag: ASN1Tag
    let content: ArraySlice<UInt8>
    let children: [DERTree]?

    init?(_ node: ASN1Node) {
        tag = node.tag
        content = node.content
        guard node.tag.isConstructed else {
            children = nil
            return
        }
        guard var reader = try? node.children() else { return nil }
        var parsed: [DERTree] = []
        while !reader.isAtEnd {
            guard let child = try? reader.readNode(), let tree = DERTree(child) else { return nil }
            parsed.append(tree)
        }
        children = parsed
    }

    var encoded: [UInt8] {
        var writer = DERWriter()
        if let children {
            writer.append(tag, content: children.flatMap(\.encoded))
        } else {
            writer.append(tag, content: content)
        }
        return writer.bytes
    }
}
