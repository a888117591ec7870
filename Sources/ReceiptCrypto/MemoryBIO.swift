internal import CReceiptOpenSSL
internal import CReceiptShims

/// A memory BIO that owns a copy of its input, freed when this value goes away.
final class MemoryBIO {
    let pointer: OpaquePointer

    /// An empty BIO to write into.
    init() throws(CryptoError) {
        guard let bio = BIO_new(BIO_s_mem()) else { throw CryptoError(.operationFailed("allocating a memory BIO")) }
        pointer = bio
    }

    /// A BIO holding a copy of `bytes` to read from.
    convenience init(copying bytes: some Collection<UInt8>) throws(CryptoError) {
        try self.init()
        let array = Array(bytes)
        guard array.count <= Int32.max else { throw CryptoError(.operationFailed("reading more than 2 GiB")) }
        let written = array.withUnsafeBytes { BIO_write(pointer, $0.baseAddress, Int32($0.count)) }
        guard array.isEmpty || written == Int32(array.count) else {
            throw CryptoError(.operationFailed("writing to a memory BIO"))
        }
    }

    deinit { BIO_free(pointer) }

    /// Everything written so far.
    var contents: [UInt8] {
        var data: UnsafePointer<UInt8>?
        let count = receipt_BIO_get_mem_data(pointer, &data)
        guard let data, count > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: count))
    }

    var text: String { String(decoding: contents, as: UTF8.self) }
}
