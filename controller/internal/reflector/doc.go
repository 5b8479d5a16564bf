// Package reflector keeps a handler informed of the metadata of every
// object of one resource: it lists, then watches from the list's
// resourceVersion, and relists when the watch is refused with 410 Gone.
//
// # Invariants
//
//   - The handler sees, per resource, one Replace with the complete set of
//     objects after every (re)list, then Upsert and Delete in the order the
//     server sent them. It is called from the reflector's goroutine only, so
//     calls for one resource never overlap.
//   - Synced is closed after the first complete Replace and never reopened:
//     a consumer that waits on it never acts on a partial first list.
//   - A watch resumes from the last revision seen (an event's or a
//     bookmark's), so no event is skipped or repeated; when the server says
//     that revision is gone (410), the reflector relists, and Replace carries
//     the deletions that happened meanwhile.
//   - Only metadata is decoded (Meta), so the memory kept per object is
//     small whatever the object's size.
//   - Failures back off exponentially (Base to Max); Run returns only when
//     ctx ends and leaves no goroutine or open watch behind.
package reflector
