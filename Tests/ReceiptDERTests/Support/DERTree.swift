import ReceiptDER

/// Any element as a tree of tags and contents: what a reader saw, in a form ``DERWriter`` can write back.
///
/// Re-serialising a parsed tree must give back the exact DER bytes: DER has one encoding per value.
indirect enum DERTree: Equatable {
    case primitive(ASN1Tag, content: [UInt8])
    case constructed(ASN1Tag, children: [DERTree])

    init(_ node: ASN1Node) throws(DERError) {
        guard node.tag.isConstructed else {
            self = .primitive(node.tag, content: Array(node.content))
            return
        }
        var reader = try node.children()
        var children: [DERTree] = []
        while !reader.isAtEnd {
            children.append(try DERTree(reader.readNode()))
        }
        self = .constructed(node.tag, children: children)
    }

    init(parsing bytes: [UInt8], rules: EncodingRules) throws(DERError) {
        try self.init(ASN1Node.parse(bytes, rules: rules))
    }

    func write(to writer: inout DERWriter) {
        switch self {
        case .primitive(let tag, let content):
            writer.append(tag, content: content)
        case .constructed(let tag, let children):
            writer.appendConstructed(tag) { inner in
                for child in children { child.write(to: &inner) }
            }
        }
    }

    var derEncoding: [UInt8] {
        var writer = DERWriter()
        write(to: &writer)
        return writer.bytes
    }
}
