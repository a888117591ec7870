import Foundation
import LegacyReceipt
import ReceiptCrypto
import ReceiptModel
import StrictJSON
import Testing

@Suite("Real legacy receipts from other projects")
struct RealReceiptTests {
    @Test("the manifest lists the seven real receipts")
    func manifestIsComplete() {
        #expect(LegacyVector.all.count == 7)
    }

    @Test(
        "verifies against Apple Inc. Root with the shipped intermediates at its purchase date",
        arguments: LegacyVector.all)
    func verifiesAtPurchaseDate(_ vector: LegacyVector) throws {
        let verified = try Vectors.appleVerifier().verify(vector.bytes())
        #expect(verified.validationTime == verified.purchaseInfo.purchaseDate)
        #expect(verified.validationTime.secondsSince1970 == vector.integer("openssl_chain_ok_at"))
        #expect(verified.chain.count == 3)
        #expect(verified.chain.first?.subject == vector.string("leaf_subject"))
        #expect(verified.chain.dropFirst().first == (try Vectors.apple(#require(vector.string("intermediate")))))
        #expect(verified.chain.last == (try Vectors.apple(Vectors.appleRoot)))
    }

    @Test("reads the signature blob's version and lengths as OpenSSL's inspection did", arguments: LegacyVector.all)
    func signatureBlob(_ vector: LegacyVector) throws {
        let signature = try #require(try vector.receipt().signature)
        #expect(Int64(signature.version) == vector.integer("signature_version"))
        #expect(Int64(signature.blob.count) == vector.integer("signature_blob_length"))
        #expect(Int64(signature.certificateDER.count) == vector.integer("certificate_length"))
        #expect(signature.rsaSignature.count == (signature.version == 2 ? 128 : 256))
    }

    @Test("reads environment, pod and signing-status", arguments: LegacyVector.all)
    func topLevelFields(_ vector: LegacyVector) throws {
        let receipt = try vector.receipt()
        #expect(receipt.environment == vector.string("environment"))
        #expect(receipt.pod == vector.string("pod"))
        #expect(receipt.signingStatus == vector.string("signing_status"))
    }

    @Test("keeps every purchase-info key and value in the signed order", arguments: LegacyVector.all)
    func rawPurchaseInfo(_ vector: LegacyVector) throws {
        let fields = try vector.receipt().purchaseInfo.fields
        #expect(fields.keys == vector.purchaseInfo.map(\.key))
        #expect(fields.map { $0.value.stringValue ?? "" } == vector.purchaseInfo.map(\.value))
    }

    @Test("types the documented purchase-info fields", arguments: LegacyVector.all)
    func typedPurchaseInfo(_ vector: LegacyVector) throws {
        let info = try vector.receipt().purchaseInfo
        let raw = Dictionary(uniqueKeysWithValues: vector.purchaseInfo.map { ($0.key, $0.value) })
        #expect(info.bundleID == raw["bid"])
        #expect(info.bundleVersion == raw["bvrs"])
        #expect(info.productID == raw["product-id"])
        #expect(info.transactionID == raw["transaction-id"])
        #expect(info.originalTransactionID == raw["original-transaction-id"])
        #expect(info.purchaseDate?.millisecondsSince1970 == raw["purchase-date-ms"].flatMap { Int64($0) })
        #expect(info.purchaseDate?.appleFormat == raw["purchase-date"])
        #expect(
            info.originalPurchaseDate?.millisecondsSince1970 == raw["original-purchase-date-ms"].flatMap(Int64.init))
        #expect(info.expiresDate?.millisecondsSince1970 == raw["expires-date"].flatMap { Int64($0) })
        #expect(info.quantity == raw["quantity"].flatMap { Int64($0) })
        #expect(info.itemID == raw["item-id"].flatMap { Int64($0) })
        #expect(info.appItemID == raw["app-item-id"].flatMap { Int64($0) })
        #expect(info.versionExternalIdentifier == raw["version-external-identifier"].flatMap { Int64($0) })
        #expect(info.webOrderLineItemID == raw["web-order-line-item-id"].flatMap { Int64($0) })
        #expect(info.uniqueIdentifier == raw["unique-identifier"])
        #expect(info.uniqueVendorIdentifier == raw["unique-vendor-identifier"])
    }

    @Test(
        "gives verifyReceipt's receipt JSON: dashes turned into underscores, strings as signed, in order",
        arguments: LegacyVector.all)
    func verifyReceiptJSON(_ vector: LegacyVector) throws {
        let json = try Vectors.appleVerifier().verify(vector.bytes()).verifyReceiptJSON
        let expected = vector.purchaseInfo.map { ($0.key.replacingOccurrences(of: "-", with: "_"), $0.value) }
        #expect(json.keys == expected.map(\.0))
        #expect(json.members.map(\.value) == expected.map { JSONValue.string($0.1) })
    }

    @Test("the property-list form reads the same as the base64 form", arguments: LegacyVector.all)
    func plistForm(_ vector: LegacyVector) throws {
        let fromPlist = try LegacyTransactionReceipt(parsing: Vectors.bytes(vector.plist))
        #expect(fromPlist == (try vector.receipt()))
    }

    @Test("one second after its leaf expired, the chain is refused as expired", arguments: LegacyVector.all)
    func expiredLeaf(_ vector: LegacyVector) throws {
        let notAfter = try #require(vector.integer("leaf_not_after"))
        let error = legacyError {
            try Vectors.appleVerifier().verify(vector.bytes(), at: ReceiptDate(secondsSince1970: notAfter + 1))
        }
        #expect(error?.code == .certificateExpired)
    }

    @Test("one second before its leaf was issued, the chain is refused as not yet valid", arguments: LegacyVector.all)
    func leafNotYetValid(_ vector: LegacyVector) throws {
        let notBefore = try #require(vector.integer("leaf_not_before"))
        let error = legacyError {
            try Vectors.appleVerifier().verify(vector.bytes(), at: ReceiptDate(secondsSince1970: notBefore - 1))
        }
        #expect(error?.code == .certificateNotYetValid)
    }

    @Test("under Apple Root CA - G3 instead of Apple Inc. Root, the chain is untrusted", arguments: LegacyVector.all)
    func wrongAppleRoot(_ vector: LegacyVector) throws {
        let verifier = try Vectors.appleVerifier(anchor: "AppleRootCA-G3.cer")
        #expect(legacyError { try verifier.verify(vector.bytes()) }?.code == .untrustedChain)
    }

    @Test("under an unrelated root of our own, the chain is untrusted", arguments: LegacyVector.all)
    func unrelatedRoot(_ vector: LegacyVector) throws {
        let chain = try TestChain.rsa.get()
        let verifier = try LegacyReceiptVerifier(trustAnchors: [chain.root], intermediates: [chain.intermediate])
        #expect(legacyError { try verifier.verify(vector.bytes()) }?.code == .untrustedChain)
    }

    @Test("without its intermediate, the chain is untrusted", arguments: LegacyVector.all)
    func missingIntermediate(_ vector: LegacyVector) throws {
        let verifier = try Vectors.appleVerifier(intermediates: [])
        #expect(legacyError { try verifier.verify(vector.bytes()) }?.code == .untrustedChain)
    }
}

@Suite("What each origin project asserts")
struct OriginAssertionTests {
    static let gagPlus = "cargobay/legacy-autorenew-gagplus.b64"
    static let koenrh = "apple_receipt-koenrh/valid_receipt.b64"

    @Test("CargoBay: the gag-plus receipt verifies at its leaf's last second, 2014-06-14T22:05:55Z")
    func cargoBayLastSecond() throws {
        let bytes = try LegacyVector.named(Self.gagPlus).bytes()
        let verified = try Vectors.appleVerifier().verify(bytes, at: ReceiptDate(secondsSince1970: 1_402_783_555))
        #expect(verified.chain.count == 3)
    }

    @Test("CargoBay: the gag-plus receipt does not verify at 1402783557, after its leaf expired")
    func cargoBayAfterExpiry() throws {
        let bytes = try LegacyVector.named(Self.gagPlus).bytes()
        let error = legacyError {
            try Vectors.appleVerifier().verify(bytes, at: ReceiptDate(secondsSince1970: 1_402_783_557))
        }
        #expect(error?.code == .certificateExpired)
    }

    @Test("CargoBay: purchase-info with quantity 1 changed to 9 does not verify")
    func cargoBayTamperedQuantity() throws {
        let receipt = try LegacyVector.named(Self.gagPlus).receipt()
        let text = String(decoding: receipt.purchaseInfoBytes, as: UTF8.self)
        let tampered = text.replacingOccurrences(of: "\"quantity\" = \"1\"", with: "\"quantity\" = \"9\"")
        #expect(tampered != text)
        let input = rewritten(receipt, purchaseInfo: Array(tampered.utf8))
        #expect(legacyError { try Vectors.appleVerifier().verify(input) }?.code == .invalidSignature)
    }

    @Test("CargoBay: the gag-plus receipt is an auto-renewable purchase whose expires-date is in milliseconds")
    func cargoBayExpiresDate() throws {
        let info = try LegacyVector.named(Self.gagPlus).receipt().purchaseInfo
        #expect(info.expiresDate == ReceiptDate(millisecondsSince1970: 1_354_436_154_000))
        #expect(info.expiresDate?.appleFormat == info.string("expires-date-formatted"))
        #expect(info.webOrderLineItemID == 1_000_000_026_436_290)
        #expect(info.productID == "com.d__buzz.gag_plus.ios.001.ars.premium.1y")
    }

    @Test("koenrh/apple_receipt: the version 3 receipt verifies through the WWDR CA with a 256-byte signature")
    func koenrhVersion3() throws {
        let verified = try Vectors.appleVerifier().verify(LegacyVector.named(Self.koenrh).bytes())
        #expect(verified.receipt.signature?.version == 3)
        #expect(verified.receipt.signature?.rsaSignature.count == 256)
        #expect(
            verified.chain.dropFirst().first?.commonName
                == "Apple Worldwide Developer Relations Certification Authority")
        #expect(verified.chain.first?.commonName == "Mac App Store and iTunes Store Receipt Signing")
    }

    @Test("koenrh/apple_receipt: the version 3 receipt does not chain through the iTunes Store CA alone")
    func koenrhNeedsWWDR() throws {
        let verifier = try Vectors.appleVerifier(intermediates: [Vectors.iTunesStoreCA])
        let bytes = try LegacyVector.named(Self.koenrh).bytes()
        #expect(legacyError { try verifier.verify(bytes) }?.code == .untrustedChain)
    }

    @Test("koenrh/apple_receipt: verifyReceipt JSON equals the purchase info its tests assert")
    func koenrhJSON() throws {
        let vector = try LegacyVector.named(Self.koenrh)
        guard case .object(let asserted)? = vector.entry["asserted_verify_receipt"] else {
            Issue.record("the manifest has no asserted purchase info for \(vector.file)")
            return
        }
        let json = try Vectors.appleVerifier().verify(vector.bytes()).verifyReceiptJSON
        #expect(Set(json.keys) == Set(asserted.keys))
        for key in asserted.keys { #expect(json[key] == asserted[key], "\(key)") }
    }

    @Test("koenrh/apple_receipt: booleans and identifiers of the subscription are typed")
    func koenrhTypedFields() throws {
        let info = try LegacyVector.named(Self.koenrh).receipt().purchaseInfo
        #expect(info.isTrialPeriod == false)
        #expect(info.isInIntroOfferPeriod == false)
        #expect(info.appItemID == 947_936_149)
        #expect(info.versionExternalIdentifier == 825_366_855)
        #expect(info.expiresDate == ReceiptDate(millisecondsSince1970: 1_516_727_024_000))
    }

    @Test("the 2015 receipt without a newline after its brace parses like the others")
    func compactOuterPlist() throws {
        let receipt = try LegacyVector.named("revenuecat/base64encoded_unsupportedReceipt2.txt").receipt()
        #expect(receipt.purchaseInfo.bundleID == "com.es.Purchaser")
        #expect(receipt.fields.keys == ["signature", "purchase-info", "environment", "pod", "signing-status"])
    }

    @Test("Apple's synthetic unsigned receipt parses and gives transaction id 33993399")
    func syntheticTransactionID() throws {
        let receipt = try LegacyTransactionReceipt(
            parsing: Vectors.bytes("apple-assl/mock_signed_data/legacyTransaction.b64"))
        #expect(receipt.purchaseInfo.transactionID == "33993399")
        #expect(receipt.signature == nil)
    }

    @Test("Apple's synthetic unsigned receipt is refused for having no signature")
    func syntheticIsRefused() throws {
        let bytes = try Vectors.bytes("apple-assl/mock_signed_data/legacyTransaction.b64")
        let error = legacyError { try Vectors.appleVerifier().verify(bytes) }
        #expect(error?.code == .missingSignature)
        #expect(error?.message.contains("no \"signature\"") == true)
    }
}
