import Foundation
import LegacyReceipt
import PropertyList
import ReceiptCrypto
import ReceiptDER

extension FuzzChecks {
    /// The targets whose checks live in this file. `Tests/FuzzRegressionTests` replays them with ``targets``.
    public static let legacyTargets: [String: @Sendable ([UInt8]) -> String?] = ["FuzzLegacy": legacy]

    /// Old-style property lists and iOS 6 transaction receipts:
    /// - a property list that parses is written as text that parses back to the same value, and writing that value
    ///   again gives the same text;
    /// - a receipt that parses reads the same from its fields written out again, and from its property-list text
    ///   when it was given as base64; its signed data is the version byte followed by the decoded purchase info, and
    ///   its signature blob is exactly version ‖ signature ‖ 4-byte length ‖ certificate;
    /// - a receipt that verifies under Apple's root was validated at its purchase date, its chain ends at the root,
    ///   and its verifyReceipt JSON has one member per purchase-info key.
    public static func legacy(_ input: [UInt8]) -> String? {
        if let finding = propertyListRoundTrip(input) { return finding }
        guard let receipt = try? LegacyTransactionReceipt(parsing: input) else { return nil }
        if let signature = receipt.signature {
            guard receipt.signedData == [signature.version] + receipt.purchaseInfoBytes else {
                return "the signed data is not the version byte followed by the purchase info"
            }
            let length = UInt32(signature.certificateDER.count)
            let lengthBytes = [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: length >> $0) }
            guard
                signature.blob == [signature.version] + signature.rsaSignature + lengthBytes + signature.certificateDER
            else { return "the signature blob does not re-assemble from its parts" }
        }
        let rewritten = PropertyListValue.dictionary(receipt.fields).openStepText
        guard (try? LegacyTransactionReceipt(parsing: rewritten, maximumSize: .max)) == receipt else {
            return "a receipt's fields written out again read as a different receipt"
        }
        if input.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) != UInt8(ascii: "{"),
            let text = try? Base64.decode(input),
            (try? LegacyTransactionReceipt(parsing: text, maximumSize: .max)) != receipt
        {
            return "a receipt reads differently from base64 and from its property-list text"
        }
        guard receipt.purchaseInfo.verifyReceiptJSON.members.count == receipt.purchaseInfo.fields.count else {
            return "verifyReceipt JSON does not have one member per purchase-info key"
        }
        guard receipt.signature != nil, let verifier = LegacyAnchors.verifier else { return nil }
        guard let verified = try? verifier.verify(receipt) else { return nil }
        guard verified.validationTime == receipt.purchaseInfo.purchaseDate,
            verified.chain.last.map(AppleCertificates.isAppleRoot) == true
        else { return "a verified receipt was not validated at its purchase date up to Apple's root" }
        return nil
    }

    /// Whether `input` parses and verifies as a legacy receipt under Apple's root (for checking the seed corpus).
    public static func legacyVerifies(_ input: [UInt8]) -> Bool {
        (try? LegacyAnchors.verifier?.verify(input)) != nil
    }

    /// A property list that parses writes out as text that parses back to the same value and writes out the same.
    private static func propertyListRoundTrip(_ input: [UInt8]) -> String? {
        guard let value = try? PropertyListValue(parsing: input, maximumSize: 1 << 20) else { return nil }
        let text = value.openStepText
        guard let again = try? PropertyListValue(parsing: text, maximumSize: .max) else {
            return "a written property list does not parse: \(String(decoding: text.prefix(200), as: UTF8.self))"
        }
        guard again == value else { return "a written property list parses to a different value" }
        guard again.openStepText == text else { return "writing a property list twice gives different text" }
        return nil
    }
}

/// Apple Inc. Root with the two legacy intermediates, from this checkout's `certs/apple/`.
enum LegacyAnchors {
    static let verifier: LegacyReceiptVerifier? = {
        let apple = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("certs/apple")
        func certificate(_ name: String) -> Certificate? {
            guard let data = try? Data(contentsOf: apple.appendingPathComponent(name)) else { return nil }
            return try? Certificate(derEncoded: Array(data))
        }
        guard let root = certificate("AppleIncRootCertificate.cer"),
            let iTunesStore = certificate("AppleITunesStoreCertificationAuthority.cer"),
            let wwdr = certificate("AppleWWDRCA.cer")
        else { return nil }
        return try? LegacyReceiptVerifier(trustAnchors: [root], intermediates: [iTunesStore, wwdr])
    }()
}
