import ReceiptDER

/// Parses `bytes` as one element and visits every element below it, the way a grammar-driven parser descends
/// through `children()`. Returns how many elements it saw.
@discardableResult
func walk(_ bytes: [UInt8], rules: EncodingRules, maximumDepth: Int = ASN1Reader.defaultMaximumDepth) throws(DERError)
    -> Int
{
    try walk(ASN1Node.parse(bytes, rules: rules, maximumDepth: maximumDepth))
}

/// Visits `node` and, when it is constructed, every element below it. Returns how many elements it saw.
@discardableResult
func walk(_ node: ASN1Node) throws(DERError) -> Int {
    guard node.tag.isConstructed else { return 1 }
    var count = 1
    var children = try node.children()
    while !children.isAtEnd {
        count += try walk(children.readNode())
    }
    return count
}
