package model

// The checksum of a Configuration is made of the checksums of its parts,
// so that a change of a few parts costs work in proportion to them (see
// Incremental): the Servers, the Backends and the Certificates are each a
// sumTree of (name, part checksum) entries, and the Configuration's
// checksum hashes the roots of the three trees with the rest.
//
// A sumTree spreads its entries over sumBuckets buckets by a hash of the
// name; a bucket's sum is the SHA-256 of its entries sorted by name, a
// group's the SHA-256 of the sums of its sumGroup buckets, and the root
// the SHA-256 of the group sums, each in order (sums truncated to 16
// bytes): updating one entry rehashes its bucket and 2 x 256 bytes. The structure
// depends only on the set of entries, so a tree updated entry by entry
// and one built at once from the same entries have the same root.
