import Foundation
import ReceiptCrypto
import ReceiptDER
import ReceiptJWS
import ReceiptModel
import ReceiptSigner
import StrictJSON

/// Test vectors stored as files beside the tests (see Vectors/SOURCES.md for provenance), and the anchors and
/// helpers the suites share.
enum Vectors {
    struct Missing: Error, CustomStringConvertible {
        let description: String
    }

    static func directory() throws -> URL {
        guard let url = Bundle.module.url(forResource: "Vectors", withExtension: nil) else {
            throw Missing(description: "the Vectors resource directory is missing from the test bundle")
        }
        return url
    }

    static func bytes(_ relativePath: String) throws -> [UInt8] {
        Array(try Data(contentsOf: directory().appendingPathComponent(relativePath)))
    }

    static func text(_ relativePath: String) throws -> String {
        String(decoding: try bytes(relativePath), as: UTF8.self)
    }

    static func certificate(_ relativePath: String) throws -> Certificate {
        let certificates = try Certificate.load(pemOrDER: bytes(relativePath))
        guard certificates.count == 1, let certificate = certificates.first else {
            throw Missing(description: "\(relativePath) holds \(certificates.count) certificates, expected one")
        }
        return certificate
    }

    /// Apple Root CA - G3: the anchor of Apple's real StoreKit 2 and notification JWS.
    static func appleRootG3() throws -> Certificate { try certificate("apple-pki/AppleRootCA-G3.cer") }
    /// The test root of Apple's app-store-server-library, anchor of its mock_signed_data.
    static func appleLibraryTestCA() throws -> Certificate { try certificate("apple-assl/certs/testCA.der") }
    /// The self-signed certificate Xcode's StoreKit testing signed the xcode/ JWS with, taken from their x5c.
    static func xcodeStoreKitTesting() throws -> Certificate { try certificate("derived/StoreKitTestingInXcode.cer") }

    static func verifier(
        _ anchor: Certificate,
        markerPolicy: JWSVerifier.MarkerPolicy = .underAppleRoots
    ) throws -> JWSVerifier {
        try JWSVerifier(trustAnchors: [anchor], markerPolicy: markerPolicy)
    }

    /// The code `body` fails with, or nil when it succeeds (other errors are rethrown).
    static func code<T>(_ body: () throws -> T) throws -> JWSError.Code? {
        try error(body)?.code
    }

    /// The error `body` fails with, or nil when it succeeds; errors other than ``JWSError`` (a fixture that does
    /// not load, say) are rethrown.
    static func error<T>(_ body: () throws -> T) throws -> JWSError? {
        do {
            _ = try body()
            return nil
        } catch let error as JWSError {
            return error
        }
    }

    static func date(_ rfc3339: String) throws -> ReceiptDate {
        guard let date = ReceiptDate(rfc3339: rfc3339) else { throw Missing(description: "bad date \(rfc3339)") }
        return date
    }

    /// The three dot-separated parts of a compact JWS, as text.
    static func parts(_ compact: String) -> [String] {
        compact.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    }

    /// The decoded header of a compact JWS.
    static func header(_ compact: String) throws -> JSONObject {
        guard case .object(let object) = try JSONValue(parsing: Base64URL.decode(Array(parts(compact)[0].utf8)))
        else { throw Missing(description: "header is not an object") }
        return object
    }

    /// `compact` with its header replaced by `header` (the payload and signature kept).
    static func replacingHeader(_ compact: String, with header: String) -> String {
        let parts = parts(compact)
        return ([Base64URL.encode(Array(header.utf8))] + parts.dropFirst()).joined(separator: ".")
    }

    /// The header JSON of `compact` re-serialised with `alg` set to `algorithm`.
    static func header(of compact: String, algorithm: String) throws -> String {
        var header = try header(compact)
        header["alg"] = .string(algorithm)
        return JSONValue.object(header).serialized()
    }
}

/// Chains and signers made fresh for the tests (EC P-256, TEST ONLY).
enum Fresh {
    static let chain = Result { try DevelopmentChain.create(algorithm: .ecP256) }
    static let appleLikeChain = Result { try DevelopmentChain.create(algorithm: .ecP256, profile: .appleCompatible) }

    static func signer(_ chain: DevelopmentChain) throws -> JWSSigner {
        try JWSSigner(key: chain.signerKey, chain: [chain.signer, chain.intermediate, chain.root])
    }

    static let signedDate = ReceiptDate(millisecondsSince1970: 1_717_588_800_123)

    static let subscription = InAppPurchase(
        productID: "com.example.pro.monthly", transactionID: "2000000000000002",
        purchaseDate: ReceiptDate(millisecondsSince1970: 1_717_232_400_000), quantity: 1,
        originalTransactionID: "2000000000000001",
        originalPurchaseDate: ReceiptDate(millisecondsSince1970: 1_714_554_000_000),
        expiresDate: ReceiptDate(millisecondsSince1970: 1_719_824_400_000), webOrderLineItemID: 2_000_000_123_357_229,
        isTrialPeriod: false, isInIntroOfferPeriod: true)

    static let coins = InAppPurchase(
        productID: "com.example.coins100", transactionID: "2000000000000003",
        purchaseDate: ReceiptDate(millisecondsSince1970: 1_717_525_800_000), quantity: 3,
        cancellationDate: ReceiptDate(millisecondsSince1970: 1_717_574_400_000))

    /// A signed transaction for `purchase` under the fresh chain.
    static func transaction(
        _ purchase: InAppPurchase = subscription,
        environment: AppStoreEnvironment = .sandbox,
        signedDate: ReceiptDate = signedDate
    ) throws -> String {
        try signer(chain.get()).sign(
            payload: SignedTransaction.payload(
                for: purchase, bundleID: "com.example.game", environment: environment, signedDate: signedDate,
                otherwiseType: .consumable))
    }
}
