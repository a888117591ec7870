import LegacyReceipt
import PurchaseVerifier
import ReceiptCrypto
import ReceiptDER
import ReceiptJWS
import ReceiptModel
import ReceiptVerifier
import StrictJSON

/// `receipt inspect`: everything a purchase proof contains, with no trust decision.
enum InspectCommand {
    static let help = """
        Usage: receipt inspect FILE|- [--json]

        Shows everything in a purchase proof, whichever format it is in. For an app receipt (DER or base64): the
        envelope, every certificate, every field including undocumented ones, and whether the signature matches
        the embedded signer certificate. For StoreKit 2 signed data or a server notification: the header and the
        payload. For an iOS 6 transaction receipt: its fields, its signature version and leaf certificate, and
        its purchase-info. No trust decision is made: use 'receipt verify --trust …' to decide whether to
        believe it.

        Options:
          --json   Print one JSON object.
        """

    /// The options the command accepts.
    static let options = OptionSpec(flags: ["--json"], maximumPositionals: 1)

    static func run(_ arguments: [String]) throws(CommandFailure) {
        let parsed = try Arguments(arguments, spec: options)
        guard let path = parsed.positionals.first else { throw .usage("FILE is required (use - for standard input)") }
        // As `receipt verify` does; `inspect` makes no keys and no TLS connections either.
        OpenSSLStart.readCertificateKeysDirectly()
        let limits = VerificationLimits()
        let input = try Files.read(path, limit: limits.maximumInputSize)
        let format = PurchaseProofFormat.detect(input)
        if format != .appReceipt {
            let document = try OtherFormatInspection.json(input, format: format, path: path)
            var output = JSONValue.object(document).serializedBytes(pretty: true)
            output.append(UInt8(ascii: "\n"))
            Files.writeStandardOutput(output)
            return
        }
        let envelope: ReceiptEnvelope
        let receipt: Receipt
        do {
            envelope = try ReceiptEnvelope(input: input, limits: limits)
            receipt = try envelope.receipt(limits: limits)
        } catch {
            throw .rejected("\(path): cannot be read as a receipt: \(error)")
        }
        var signatureProblem: String?
        do {
            try envelope.verifySignature()
        } catch {
            signatureProblem = "\(error)"
        }
        if parsed.flag("--json") {
            let document = ReceiptInspection.json(
                envelope: envelope, receipt: receipt, signatureProblem: signatureProblem)
            var output = JSONValue.object(document).serializedBytes(pretty: true)
            output.append(UInt8(ascii: "\n"))
            Files.writeStandardOutput(output)
        } else {
            let text = ReceiptInspection.text(envelope: envelope, receipt: receipt, signatureProblem: signatureProblem)
            Files.writeStandardOutput(Array(text.utf8))
        }
    }
}

/// How `inspect` presents a receipt.
enum ReceiptInspection {
    static let notice = "No trust decision was made: this is what the receipt claims, not whether to believe it."

    static func json(envelope: ReceiptEnvelope, receipt: Receipt, signatureProblem: String?) -> JSONObject {
        var document = JSONObject()
        document["format"] = .string(PurchaseProofFormat.appReceipt.rawValue)
        document["trust_decision"] = .string("none")
        document["notice"] = .string(notice)
        document["envelope"] = .object(envelopeJSON(envelope))
        var signature = JSONObject()
        signature["matches_embedded_signer"] = .bool(signatureProblem == nil)
        signature["problem"] = signatureProblem.map(JSONValue.string)
        document["signature"] = .object(signature)
        document["certificates"] = .array(
            envelope.certificates.enumerated().map { index, certificate in
                .object(certificateJSON(certificate, isSigner: certificate === envelope.signerCertificate))
            })
        var receiptObject = receipt.verifyReceiptJSON
        receiptObject["opaque_value"] = receipt.opaqueValue.map { .string(Base64.encode($0)) }
        receiptObject["sha1_hash"] = receipt.sha1Hash.map { .string(Base64.encode($0)) }
        receiptObject["unknown_attributes"] = .array(receipt.unknownAttributes.map(attributeJSON))
        if case .array(let purchases)? = receiptObject["in_app"] {
            receiptObject["in_app"] = .array(
                zip(purchases, receipt.inAppPurchases).map { value, purchase in
                    guard case .object(var object) = value else { return value }
                    object["product_type"] = purchase.productType.map(JSONValue.integer)
                    object["unknown_attributes"] = .array(purchase.unknownAttributes.map(attributeJSON))
                    return .object(object)
                })
        }
        document["receipt"] = .object(receiptObject)
        return document
    }

    static func text(envelope: ReceiptEnvelope, receipt: Receipt, signatureProblem: String?) -> String {
        var lines = [notice, "", "envelope:"]
        let envelopeObject = envelopeJSON(envelope)
        for member in envelopeObject.members { lines.append("  \(member.key): \(plain(member.value))") }
        lines.append(
            "signature: "
                + (signatureProblem.map { "does NOT match the embedded signer (\($0))" }
                    ?? "matches the embedded signer certificate's key (this alone proves nothing about who signed)"))
        lines.append("certificates (\(envelope.certificates.count)):")
        for (index, certificate) in envelope.certificates.enumerated() {
            let role = certificate === envelope.signerCertificate ? "signer" : "other"
            lines += HumanReadable.certificateLines(certificate, index: index, role: role)
        }
        lines.append("receipt:")
        for member in receipt.verifyReceiptJSON.members where member.key != "in_app" {
            lines.append("  \(member.key): \(plain(member.value))")
        }
        if let opaque = receipt.opaqueValue { lines.append("  opaque_value: \(Base64.encode(opaque))") }
        if let hash = receipt.sha1Hash { lines.append("  sha1_hash: \(Base64.encode(hash))") }
        for attribute in receipt.unknownAttributes { lines.append("  " + attributeText(attribute)) }
        lines.append("in-app purchases (\(receipt.inAppPurchases.count)):")
        for (index, purchase) in receipt.inAppPurchases.enumerated() {
            lines.append("  [\(index)]")
            for member in purchase.verifyReceiptJSON.members where !member.key.hasSuffix("_ms") {
                lines.append("    \(member.key): \(plain(member.value))")
            }
            if let productType = purchase.productType { lines.append("    product_type: \(productType)") }
            for attribute in purchase.unknownAttributes { lines.append("    " + attributeText(attribute)) }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func envelopeJSON(_ envelope: ReceiptEnvelope) -> JSONObject {
        var object = JSONObject()
        object["content_type"] = .string(
            "signedData (1.2.840.113549.1.7.2) holding "
                + (envelope.isCompressed ? "compressedData (zlib) of data" : "data"))
        object["encoding"] = .string(
            envelope.signedData.hasIndefiniteLengthEnvelope ? "BER, indefinite lengths" : "definite lengths")
        object["digest_algorithm"] = .string(envelope.digestAlgorithm.rawValue)
        object["signature_algorithm"] = .string(envelope.signerInfo.signatureAlgorithm.algorithm.description)
        object["signed_attributes"] = .bool(envelope.signerInfo.signedAttributes != nil)
        object["compressed"] = .bool(envelope.isCompressed)
        object["signed_content_bytes"] = .integer(envelope.content.count)
        object["payload_bytes"] = (try? envelope.payload().count).map(JSONValue.integer) ?? .null
        return object
    }

    static func certificateJSON(_ certificate: Certificate, isSigner: Bool) -> JSONObject {
        var object = JSONObject()
        object["role"] = .string(isSigner ? "signer" : "other")
        object["subject"] = .string(certificate.subject)
        object["issuer"] = .string(certificate.issuer)
        object["serial_number"] = .string(certificate.serialNumberHex)
        object["not_before"] = .string(ReceiptDate(secondsSince1970: certificate.notBefore).rfc3339)
        object["not_after"] = .string(ReceiptDate(secondsSince1970: certificate.notAfter).rfc3339)
        object["key"] = .string((try? certificate.publicKey.algorithm.description) ?? "unknown")
        object["certificate_authority"] = .bool(certificate.isCertificateAuthority)
        object["sha256_fingerprint"] = .string(certificate.sha256Fingerprint)
        return object
    }

    private static func attributeJSON(_ attribute: ReceiptAttribute) -> JSONValue {
        var object = JSONObject()
        object["type"] = .integer(attribute.type)
        object["version"] = .integer(attribute.version)
        object["value_hex"] = .string(Hex.encode(attribute.value))
        object["value_text"] = derText(attribute.value).map(JSONValue.string)
        return .object(object)
    }

    private static func attributeText(_ attribute: ReceiptAttribute) -> String {
        let value = derText(attribute.value).map { "\"\($0)\"" } ?? Hex.encode(attribute.value)
        return "field \(attribute.type) (undocumented, version \(attribute.version)): \(value)"
    }

    /// The text of a value that is a DER UTF8String or IA5String, or the number of a DER INTEGER.
    private static func derText(_ value: [UInt8]) -> String? {
        guard let node = try? ASN1Node.parse(value, rules: .der) else { return nil }
        if let text = try? node.utf8String() { return text }
        if let text = try? node.ia5String() { return text }
        if let number: Int64 = try? node.integerValue() { return String(number) }
        return nil
    }

    private static func plain(_ value: JSONValue) -> String {
        switch value {
        case .string(let text): text
        default: value.serialized()
        }
    }
}

/// How `inspect` presents the formats other than app receipts (always as JSON: their fields are JSON or
/// key-value already).
enum OtherFormatInspection {
    static func json(_ input: [UInt8], format: PurchaseProofFormat, path: String) throws(CommandFailure) -> JSONObject {
        var document = JSONObject([
            "format": .string(format.rawValue), "trust_decision": .string("none"),
            "notice": .string(ReceiptInspection.notice),
        ])
        do {
            switch format {
            case .appReceipt: break
            case .unrecognized:
                throw CommandFailure.rejected("\(path): \(PurchaseProofFormat.describeUnrecognized(input))")
            case .signedData:
                let (header, payload) = try JWSVerifier.decodeUnverified(input)
                document["header"] = .object(header)
                document["payload"] = .object(payload)
            case .serverNotification:
                guard case .object(let body) = try JSONValue(parsing: input),
                    case .string(let signedPayload)? = body["signedPayload"]
                else { throw CommandFailure.rejected("\(path): the notification has no signedPayload string") }
                let (header, payload) = try JWSVerifier.decodeUnverified(Array(signedPayload.utf8))
                document["header"] = .object(header)
                document["payload"] = .object(payload)
            case .legacyTransactionReceipt:
                let receipt = try LegacyTransactionReceipt(parsing: input)
                document["environment"] = receipt.environment.map(JSONValue.string)
                document["pod"] = receipt.pod.map(JSONValue.string)
                document["signing_status"] = receipt.signingStatus.map(JSONValue.string)
                if let signature = receipt.signature {
                    document["signature_version"] = .integer(signature.version)
                    document["certificate"] =
                        (try? Certificate(derEncoded: signature.certificateDER)).map {
                            .object(ReceiptInspection.certificateJSON($0, isSigner: true))
                        } ?? .string("undecodable")
                }
                document["purchase_info"] = .object(receipt.purchaseInfo.verifyReceiptJSON)
            }
        } catch let failure as CommandFailure {
            throw failure
        } catch {
            throw .rejected("\(path): cannot be read as \(format.rawValue): \(error)")
        }
        return document
    }
}
