import Foundation
import ReceiptCrypto
import ReceiptDER
import ReceiptModel
import ReceiptVerifier
import StrictJSON
import Testing

/// One real receipt from `Vectors/real/manifest.json`.
struct RealReceipt: CustomTestStringConvertible, Sendable {
    let entry: JSONObject
    var file: String { entry["file"]?.stringValue ?? "" }
    var testDescription: String { file }

    static let manifest: JSONValue = (try? Vectors.json("real/manifest.json")) ?? .null
    static let all: [RealReceipt] = {
        guard case .array(let receipts)? = manifest["receipts"] else { return [] }
        return receipts.compactMap { value in
            guard case .object(let object) = value else { return nil }
            return RealReceipt(entry: object)
        }
    }()

    func verifier() throws -> ReceiptVerifier {
        let anchorName = entry["anchor"]?.stringValue ?? ""
        let anchorPath = Self.manifest["anchors"]?[anchorName]?.stringValue ?? ""
        return try ReceiptVerifier(trustAnchors: [Vectors.certificate("real/" + anchorPath)])
    }

    func date(_ key: String, in object: JSONObject? = nil) -> ReceiptDate? {
        (object ?? entry)[key]?.stringValue.flatMap { ReceiptDate(rfc3339: $0) }
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

@Suite("Real receipts from other projects")
struct RealReceiptTests {
    @Test("the manifest lists every real receipt")
    func manifestIsComplete() {
        #expect(RealReceipt.all.count == 23)
    }

    @Test("verifies against its pinned root at its creation date", arguments: RealReceipt.all)
    func verifiesAtCreationDate(_ vector: RealReceipt) throws {
        let verified = try vector.verifier().verify(Vectors.bytes("real/" + vector.file))
        #expect(verified.validationTime == vector.date("receipt_creation_date"))
        #expect(verified.digestAlgorithm.rawValue.lowercased() == vector.entry["digest"]?.stringValue)
    }

    @Test("decodes the fields its origin project asserts", arguments: RealReceipt.all)
    func decodesFields(_ vector: RealReceipt) throws {
        let receipt = try vector.verifier().verify(Vectors.bytes("real/" + vector.file)).receipt
        let entry = vector.entry
        #expect(receipt.receiptType == entry["receipt_type"]?.stringValue)
        #expect(receipt.appItemID == entry["app_item_id"]?.integerValue)
        #expect(receipt.bundleID == entry["bundle_id"]?.stringValue)
        #expect(receipt.applicationVersion == entry["application_version"]?.stringValue)
        #expect(receipt.originalApplicationVersion == entry["original_application_version"]?.stringValue)
        #expect(receipt.opaqueValue.map(Base64.encode) == entry["opaque_value_b64"]?.stringValue)
        #expect(receipt.sha1Hash.map(Base64.encode) == entry["sha1_hash_b64"]?.stringValue)
        #expect(receipt.creationDate == vector.date("receipt_creation_date"))
        #expect(receipt.originalPurchaseDate == vector.date("original_purchase_date"))
        #expect(receipt.expirationDate == vector.date("expiration_date"))
    }

    @Test("decodes every in-app purchase", arguments: RealReceipt.all)
    func decodesPurchases(_ vector: RealReceipt) throws {
        let receipt = try vector.verifier().verify(Vectors.bytes("real/" + vector.file)).receipt
        guard case .array(let expected)? = vector.entry["in_app"] else {
            Issue.record("manifest entry has no in_app list")
            return
        }
        #expect(receipt.inAppPurchases.count == expected.count)
        for (purchase, value) in zip(receipt.inAppPurchases, expected) {
            guard case .object(let fields) = value else { continue }
            #expect(purchase.productID == fields["product_id"]?.stringValue)
            #expect(purchase.transactionID == fields["transaction_id"]?.stringValue)
            #expect(purchase.originalTransactionID == fields["original_transaction_id"]?.stringValue)
            #expect(purchase.purchaseDate == vector.date("purchase_date", in: fields))
            #expect(purchase.originalPurchaseDate == vector.date("original_purchase_date", in: fields))
            #expect(purchase.expiresDate == vector.date("expires_date", in: fields))
            #expect(purchase.cancellationDate == vector.date("cancellation_date", in: fields))
            #expect(purchase.quantity == fields["quantity"]?.integerValue)
            #expect(purchase.webOrderLineItemID == fields["web_order_line_item_id"]?.integerValue)
            #expect(purchase.productType == fields["product_type"]?.integerValue)
            #expect(purchase.isTrialPeriod.map { $0 ? 1 : 0 } == fields["is_trial_period"]?.integerValue)
            #expect(
                purchase.isInIntroOfferPeriod.map { $0 ? 1 : 0 } == fields["is_in_intro_offer_period"]?.integerValue)
        }
    }

    @Test(
        "binds to the device its origin project names",
        arguments: RealReceipt.all.filter { $0.entry["device_identifier_hex"] != nil })
    func checksDeviceHash(_ vector: RealReceipt) throws {
        let hex = vector.entry["device_identifier_hex"]?.stringValue ?? ""
        let device = DeviceIdentifier(
            bytes: stride(from: 0, to: hex.count, by: 2).map { offset in
                let start = hex.index(hex.startIndex, offsetBy: offset)
                return UInt8(hex[start..<hex.index(start, offsetBy: 2)], radix: 16) ?? 0
            })
        let options = VerificationOptions(deviceIdentifier: device)
        _ = try vector.verifier().verify(Vectors.bytes("real/" + vector.file), options: options)
        let otherDevice = DeviceIdentifier(bytes: [UInt8](repeating: 0, count: device.bytes.count))
        #expect(throws: ReceiptVerificationError.self) {
            try vector.verifier().verify(
                Vectors.bytes("real/" + vector.file), options: VerificationOptions(deviceIdentifier: otherDevice))
        }
    }

    @Test(
        "reads the base64 text its origin project stores",
        arguments: RealReceipt.all.filter { $0.entry["base64_file"] != nil })
    func readsBase64(_ vector: RealReceipt) throws {
        let text = try Vectors.bytes("real/" + (vector.entry["base64_file"]?.stringValue ?? ""))
        let fromText = try vector.verifier().verify(text).receipt
        let fromDER = try vector.verifier().verify(Vectors.bytes("real/" + vector.file)).receipt
        #expect(fromText == fromDER)
    }
}
