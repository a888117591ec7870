import ReceiptModel
import StrictJSON

/// What `receipt sign` reads: a receipt in verifyReceipt's vocabulary plus an optional `device_id`.
public struct SigningRequest: Sendable {
    public let receipt: Receipt
    /// The device to bind the receipt to (`device_id`: a UUID or a MAC address).
    public let deviceIdentifier: DeviceIdentifier?

    public init(receipt: Receipt, deviceIdentifier: DeviceIdentifier? = nil) {
        self.receipt = receipt
        self.deviceIdentifier = deviceIdentifier
    }

    /// Parses the JSON text of a request (see ``Receipt/init(json:extraKeys:)`` for the vocabulary).
    public init(json text: [UInt8]) throws(SigningError) {
        let document: JSONValue
        do {
            document = try JSONValue(parsing: text)
        } catch {
            throw SigningError(.invalidRequest, "request is not valid JSON: \(error)")
        }
        do {
            receipt = try Receipt(json: document, extraKeys: ["device_id"])
        } catch {
            throw SigningError(.invalidRequest, "\(error)")
        }
        switch document["device_id"] {
        case nil, .null?:
            deviceIdentifier = nil
        case .string(let text)?:
            guard let device = DeviceIdentifier(text) else {
                throw SigningError(
                    .invalidRequest,
                    "device_id: \"\(text)\" is neither a UUID (8-4-4-4-12 hex digits) nor a MAC address (6 hex pairs)")
            }
            deviceIdentifier = device
        case let other?:
            throw SigningError(.invalidRequest, "device_id: must be a string, found \(other.kindName)")
        }
    }

    /// Signs the request's receipt, bound to its device when it names one.
    public func signed(by signer: ReceiptSigner, compressed: Bool = false) throws(SigningError) -> [UInt8] {
        guard let deviceIdentifier else { return try signer.sign(receipt, compressed: compressed) }
        return try signer.sign(receipt, boundTo: deviceIdentifier, compressed: compressed)
    }
}
