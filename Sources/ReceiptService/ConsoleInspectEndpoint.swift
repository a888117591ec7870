import HTTPServer
import LegacyReceipt
import PurchaseVerifier
import ReceiptCrypto
import ReceiptDER
import ReceiptJWS
import ReceiptModel
import ReceiptVerifier
import StrictJSON

/// `POST /console/api/inspect`: whatever a backend receives (an app receipt as base64 or DER, a StoreKit 2 JWS, a
/// notification body, an iOS 6 receipt), verified against every anchor the service trusts, within
/// `limits.max_receipt_bytes`. The verdict is in the body: `format`, `valid`, the `failure` (which check, its code,
/// the verifier's message and what it means in plain words), when it was checked, the fields (as verified, or as
/// read without trust when it did not verify), the certificate chain with each one's validity at that instant,
/// and whether an app receipt is bound to a device. An empty body, one too large or one that is no purchase proof
/// at all is refused with the reason.
extension ReceiptService {
    func consoleInspect(_ request: HTTPRequest) throws(ServiceError) -> HTTPResponse {
        guard let inspector else { throw Self.consoleOff }
        let input = request.body
        guard input.contains(where: { $0 > 0x20 }) else {
            throw .badRequest("the body is empty: give a receipt, a JWS or a notification body")
        }
        let limit = inspector.receipts.limits.maximumInputSize
        guard input.count <= limit else {
            throw ServiceError(
                status: 413, code: "too_large",
                message: "the body is \(input.count) bytes, more than limits.max_receipt_bytes (\(limit))")
        }
        let format = PurchaseProofFormat.detect(input)
        guard format != .unrecognized else { throw .badRequest(PurchaseProofFormat.describeUnrecognized(input)) }
        let inspection: ProofInspection
        let failure: PurchaseProofError?
        do {
            inspection = ProofInspection(try inspector.verify(input, as: format))
            failure = nil
        } catch {
            inspection = ProofInspection(unverified: input, format: format, limits: inspector.receipts.limits)
            failure = error
        }
        let checkedAt = inspection.checkedAt ?? clock()
        return .json { answer in
            answer.add("format", string: inspection.format)
            answer.add("valid", .bool(failure == nil))
            answer.add(
                "failure",
                failure.map { .object(Self.failureJSON($0, missingIssuer: missingIntermediate(of: inspection))) }
                    ?? .null)
            answer.add("checked_at", string: checkedAt.rfc3339)
            answer.add("fields", .object(inspection.fields))
            answer.add("chain", .array(inspection.chain.map { .object(Self.certificateJSON($0, at: checkedAt)) }))
            answer.add("device_binding", inspection.deviceBinding.map(JSONValue.object) ?? .null)
        }
    }

    /// `{"subject", "issuer", "not_before", "not_after", "valid_at_checked_instant"}`.
    private static func certificateJSON(_ certificate: Certificate, at instant: ReceiptDate) -> JSONObject {
        let seconds = instant.secondsSince1970
        return JSONObject([
            "subject": .string(certificate.subject),
            "issuer": .string(certificate.issuer),
            "not_before": .string(ReceiptDate(secondsSince1970: certificate.notBefore).rfc3339),
            "not_after": .string(ReceiptDate(secondsSince1970: certificate.notAfter).rfc3339),
            "valid_at_checked_instant": .bool(certificate.notBefore <= seconds && seconds <= certificate.notAfter),
        ])
    }

    /// The issuer of an iOS 6 receipt's leaf when no configured intermediate is it: such a receipt carries its leaf
    /// only, so its chain cannot reach a root without that certificate.
    private func missingIntermediate(of inspection: ProofInspection) -> String? {
        guard inspection.format == "ios6_receipt", let leaf = inspection.chain.first,
            !configuration.intermediates.contains(where: { $0.subject == leaf.issuer })
        else { return nil }
        return leaf.issuer
    }

    /// `{"check", "code", "message", "explanation"}` of a proof that did not verify; an untrusted chain is
    /// explained by `missingIssuer` when it is known to be missing.
    private static func failureJSON(_ error: PurchaseProofError, missingIssuer: String?) -> JSONObject {
        var (check, explanation) = InspectionFailure.meaning(of: error.code)
        if error.code == "untrusted_chain", let missingIssuer {
            explanation =
                "the certificate that issued its signer (\(missingIssuer)) is not among the configuration's "
                + "intermediates, and iOS 6 receipts do not carry it: add it there (Apple's are in certs/apple/)"
        }
        return JSONObject([
            "check": .string(check.rawValue), "code": .string(error.code), "message": .string(error.message),
            "explanation": .string(explanation),
        ])
    }
}

/// What the inspector shows of a proof: its format in the console's words, its fields, the certificates it came
/// with, the instant they were checked at and, for an app receipt, its device binding.
private struct ProofInspection {
    var format: String
    var fields = JSONObject()
    var chain: [Certificate] = []
    var checkedAt: ReceiptDate?
    var deviceBinding: JSONObject?

    /// A proof that verified: its fields as verified, its validated chain (anchor last), checked at its own date.
    init(_ proof: VerifiedPurchaseProof) {
        switch proof {
        case .appReceipt(let verified):
            format = "app_receipt"
            fields = verified.receipt.verifyReceiptJSON
            (chain, checkedAt) = (verified.chain, verified.validationTime)
            deviceBinding = Self.deviceBinding(verified.receipt)
        case .legacyTransactionReceipt(let verified):
            format = "ios6_receipt"
            fields = verified.verifyReceiptJSON
            (chain, checkedAt) = (verified.chain, verified.validationTime)
        case .signedTransaction(_, let jws), .signedRenewalInfo(_, let jws), .signedAppTransaction(_, let jws),
            .otherSignedData(let jws):
            format = Self.signedDataFormat(jws.payload)
            fields = jws.payload
            (chain, checkedAt) = (jws.chain, jws.validationTime)
        case .serverNotification(let notification):
            format = "notification"
            fields = notification.signedPayload.payload
            fields["transaction"] = notification.signedTransactionInfo.map { .object($0.payload) }
            fields["renewal_info"] = notification.signedRenewalInfo.map { .object($0.payload) }
            (chain, checkedAt) = (notification.signedPayload.chain, notification.signedPayload.validationTime)
        }
    }

    /// A proof that did not verify, read as far as it can be without trusting it: its fields and the
    /// certificates it carries, or nothing when it cannot be read at all. Never throws.
    init(unverified input: [UInt8], format proofFormat: PurchaseProofFormat, limits: VerificationLimits) {
        switch proofFormat {
        case .appReceipt, .unrecognized:
            format = "app_receipt"
            guard let envelope = try? ReceiptEnvelope(input: input, limits: limits) else { return }
            chain = envelope.certificates
            guard let receipt = try? envelope.receipt(limits: limits) else { return }
            fields = receipt.verifyReceiptJSON
            checkedAt = receipt.creationDate
            deviceBinding = Self.deviceBinding(receipt)
        case .legacyTransactionReceipt:
            format = "ios6_receipt"
            guard let receipt = try? LegacyTransactionReceipt(parsing: input, maximumSize: limits.maximumInputSize)
            else { return }
            fields = receipt.purchaseInfo.verifyReceiptJSON
            chain = receipt.signature.flatMap { try? Certificate(derEncoded: $0.certificateDER) }.map { [$0] } ?? []
        case .signedData:
            format = "jws"
            guard let (header, payload) = try? JWSVerifier.decodeUnverified(input) else { return }
            format = Self.signedDataFormat(payload)
            fields = payload
            chain = Self.x5c(header)
        case .serverNotification:
            format = "notification"
            guard case .string(let signedPayload)? = (try? JSONValue(parsing: input))?["signedPayload"],
                let (header, payload) = try? JWSVerifier.decodeUnverified(Array(signedPayload.utf8))
            else { return }
            fields = payload
            chain = Self.x5c(header)
        }
    }

    /// The console's name for signed data of this payload's kind.
    private static func signedDataFormat(_ payload: JSONObject) -> String {
        switch SignedDataKind.of(payload) {
        case .transaction: "jws_transaction"
        case .renewalInfo: "jws_renewal_info"
        case .appTransaction: "jws_app_transaction"
        case .notification: "notification"
        case .other: "jws"
        }
    }

    /// The certificates of a JWS header's `x5c` that decode, leaf first.
    private static func x5c(_ header: JSONObject) -> [Certificate] {
        guard case .array(let entries)? = header["x5c"] else { return [] }
        return entries.compactMap { entry in
            guard case .string(let text) = entry, let der = try? Base64.decode(Array(text.utf8)) else { return nil }
            return try? Certificate(derEncoded: der)
        }
    }

    /// Whether an app receipt carries what binds it to one device: the SHA-1 hash and the opaque value.
    private static func deviceBinding(_ receipt: Receipt) -> JSONObject {
        let bound = receipt.sha1Hash != nil && receipt.opaqueValue != nil
        return JSONObject([
            "bound": .bool(bound),
            "detail": .string(
                bound
                    ? "the receipt carries a SHA-1 hash of a device identifier, its opaque value and the bundle id: "
                        + "it is valid on that device only (checking which needs the device's identifier)"
                    : "the receipt carries no device hash: it is bound to no device"),
        ])
    }
}

/// Which check a failure code belongs to, and what it means, in plain words, for the people who run the store.
enum InspectionFailure {
    /// The checks a proof goes through.
    enum Check: String {
        /// It can be read as its format.
        case format
        /// Its signature matches what was signed.
        case signature
        /// Its certificates chain to a trusted root and were valid when it was signed.
        case chain
        /// It is for this app, version and environment.
        case app
        /// It is for this device.
        case device
    }

    /// The check and explanation of the verifiers' code `code` (the codes of app receipts, JWS and iOS 6
    /// receipts share their names).
    static func meaning(of code: String) -> (Check, String) {
        switch code {
        case "invalid_signature":
            (.signature, "the receipt was changed after it was signed: its signature does not match its contents")
        case "unsupported_algorithm":
            (.signature, "it is signed with an algorithm Apple does not use for receipts")
        case "invalid_signed_attributes", "signer_certificate_missing", "missing_signature", "signing_status":
            (.signature, "nothing vouches for its contents: the signature or the certificate that made it is missing")
        case "untrusted_chain":
            (.chain, "it was not signed by Apple (or not by a root this service trusts): anyone could have made it")
        case "certificate_expired", "certificate_not_yet_valid":
            (.chain, "a certificate in its chain was not valid on the date it was signed")
        case "invalid_certificate", "invalid_certificate_purpose", "missing_certificate_chain",
            "missing_marker_extension":
            (.chain, "its certificates are not the kind Apple signs receipts with")
        case "wrong_bundle_id", "wrong_app_version", "wrong_environment", "wrong_app_apple_id":
            (.app, "it is genuine but for another app, version or environment")
        case "device_hash_mismatch": (.device, "it is genuine but belongs to another device")
        case "too_large": (.format, "it is larger than this service accepts")
        default: (.format, "it cannot be read as a purchase proof: it is damaged, cut short or not a receipt at all")
        }
    }
}
