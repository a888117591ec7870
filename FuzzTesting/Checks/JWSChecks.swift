import Foundation
import ReceiptCrypto
import ReceiptDER
import ReceiptJWS
import StrictJSON

extension FuzzChecks {
    /// The targets whose checks live in this file. `Tests/FuzzRegressionTests` replays them with ``targets``.
    public static let jwsTargets: [String: @Sendable ([UInt8]) -> String?] = ["FuzzJWS": jws]

    /// StoreKit 2 / App Store Server signed data (JWS) and notification bodies:
    /// - base64url text that decodes re-encodes to the same text, and a DER ECDSA signature that converts to
    ///   `r ‖ s` converts back to the same DER;
    /// - a JSON object payload that decodes as a transaction, renewal info or app transaction keeps the whole
    ///   payload and only unknown members as unknown;
    /// - a JWS that verifies re-verifies, to the same payload, after its parts are decoded and re-encoded with our
    ///   encoder (which must give back the same text); its payload re-serialises to JSON that parses to the same
    ///   value; its chain ends at a pinned anchor; it was checked at its signing date;
    /// - a notification body that verifies has a verified nested JWS for each one it carries.
    public static func jws(_ input: [UInt8]) -> String? {
        if let decoded = try? Base64URL.decode(input), Base64URL.encodedBytes(decoded) != input {
            return "base64url text does not re-encode to itself"
        }
        if let raw = try? ES256Signature.raw(fromDER: input), (try? ES256Signature.der(fromRaw: raw)) != input {
            return "a DER ECDSA signature does not survive conversion to r ‖ s and back"
        }
        guard let verifier = JWSAnchors.verifier else { return "the JWS target's anchors did not load" }
        if input.first == UInt8(ascii: "{") { return notification(input, verifier) }
        let parts = input.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        if parts.count == 3, let payload = try? JSONValue(parsing: Base64URL.decode(parts[1])),
            case .object(let object) = payload, let finding = typedReadings(object)
        {
            return finding
        }
        guard let verified = try? verifier.verify(input) else { return nil }
        let reencoded = parts.map { part in (try? Base64URL.decode(part)).map(Base64URL.encodedBytes) ?? [] }
        guard Array(reencoded.joined(separator: [UInt8(ascii: ".")])) == input else {
            return "a verified JWS does not re-encode to the same text"
        }
        guard let again = try? verifier.verify(Array(reencoded.joined(separator: [UInt8(ascii: ".")]))),
            again.payload == verified.payload
        else { return "a verified JWS does not re-verify after re-encoding" }
        let serialized = JSONValue.object(verified.payload).serialized()
        guard (try? JSONValue(parsing: serialized)) == .object(verified.payload) else {
            return "a verified payload does not re-serialise to JSON that parses to the same value"
        }
        guard (try? JSONValue(parsing: verified.payloadBytes)) == .object(verified.payload) else {
            return "the verified payload differs from its signed bytes"
        }
        guard let anchor = verified.chain.last, JWSAnchors.certificates.contains(anchor) else {
            return "a verified chain does not end at a pinned anchor"
        }
        let signed = verified.payload["signedDate"] ?? verified.payload["receiptCreationDate"]
        if case .number(let text)? = signed, verified.validationTime.millisecondsSince1970 != floorMilliseconds(text) {
            return "a JWS was not checked at its signing date"
        }
        return nil
    }

    /// Whether `input` (a JWS or a notification body) verifies under the JWS target's anchors (for the seeds).
    public static func jwsVerifies(_ input: [UInt8]) -> Bool {
        guard let verifier = JWSAnchors.verifier else { return false }
        if input.first == UInt8(ascii: "{") { return (try? verifier.verifyNotification(input)) != nil }
        return (try? verifier.verify(input)) != nil
    }

    private static func notification(_ input: [UInt8], _ verifier: JWSVerifier) -> String? {
        guard let notification = try? verifier.verifyNotification(input) else { return nil }
        guard (notification.data?.signedTransactionInfo != nil) == (notification.transaction != nil),
            (notification.data?.signedRenewalInfo != nil) == (notification.renewalInfo != nil)
        else { return "a verified notification lacks a verified nested JWS" }
        return nil
    }

    /// Each typed reading of a payload keeps the whole payload, and calls unknown exactly the undocumented members.
    private static func typedReadings(_ payload: JSONObject) -> String? {
        func check(_ json: JSONObject?, _ unknown: JSONObject?, known: Set<String>, _ name: String) -> String? {
            guard let json, let unknown else { return nil }
            guard json == payload else { return "a \(name) does not keep its whole payload" }
            guard unknown.keys == payload.keys.filter({ !known.contains($0) }) else {
                return "a \(name) calls documented members unknown, or drops undocumented ones"
            }
            return nil
        }
        let transaction = try? SignedTransaction(json: payload)
        let renewal = try? SignedRenewalInfo(json: payload)
        let app = try? SignedAppTransaction(json: payload)
        return check(transaction?.json, transaction?.unknownFields, known: SignedTransaction.knownKeys, "transaction")
            ?? check(renewal?.json, renewal?.unknownFields, known: SignedRenewalInfo.knownKeys, "renewal info")
            ?? check(app?.json, app?.unknownFields, known: SignedAppTransaction.knownKeys, "app transaction")
    }

    /// Whole milliseconds, rounded down, of a JSON number's text.
    private static func floorMilliseconds(_ text: String) -> Int64? {
        if let exact = Int64(text) { return exact }
        guard let value = Double(text), value.isFinite, abs(value) < 9e15 else { return nil }
        return Int64(value.rounded(.down))
    }
}

/// The anchors the JWS target pins: Apple Root CA - G3, the test root of Apple's server library, the certificate
/// Xcode's StoreKit testing signed the fixtures with, and our committed EC development root, so that every seed
/// verifies.
enum JWSAnchors {
    static let certificates: [Certificate] = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let files = [
            "certs/apple/AppleRootCA-G3.cer", "Tests/ReceiptJWSTests/Vectors/apple-assl/certs/testCA.der",
            "Tests/ReceiptJWSTests/Vectors/derived/StoreKitTestingInXcode.cer", "certs/dev-ec/root-ca.pem",
        ]
        return files.flatMap { file -> [Certificate] in
            guard let data = try? Data(contentsOf: root.appendingPathComponent(file)) else { return [] }
            return (try? Certificate.load(pemOrDER: Array(data))) ?? []
        }
    }()

    static let verifier: JWSVerifier? = certificates.count == 4 ? try? JWSVerifier(trustAnchors: certificates) : nil
}
