/**
 * TierKV's backend-neutral block model: the layout of a block ({@link io.tierkv.core.KvLayout})
 * and, in the subpackages, block pools, block tables, prefix hashing, eviction policies, budgets,
 * pressure modes and errors.
 *
 * <h2>Glossary (the one vocabulary of names, javadoc and messages)</h2>
 * <dl>
 *   <dt>block, block id, slot</dt>
 *   <dd>A block holds B tokens of KV for every layer; its <em>id</em> is a stable handle that it
 *       keeps while it moves between tiers; a tier's <em>slot</em> is where its bytes are now.
 *       Never one for the other.</dd>
 *   <dt>open, sealed, tail</dt>
 *   <dd>An <em>open</em> block still has positions to write; the <em>tail</em> is a sequence's
 *       open last block. A <em>sealed</em> block has all its positions written: immutable, hashed,
 *       shareable, and the only kind that may leave the device.</dd>
 *   <dt>block hash, identity</dt>
 *   <dd>The chained 128-bit hash finds a candidate; the <em>identity</em> (context fingerprint,
 *       parent hash, token ids) proves it. A hash alone never proves a block. The cache keeps one
 *       record of it per block id, which the host tier reads; the disk and remote records carry a
 *       copy with the bytes.</dd>
 *   <dt>referenced, cached, free</dt>
 *   <dd>A block is <em>referenced</em> while a block table or a lease holds it (its reference
 *       count is above 0); <em>cached</em> when nothing references it but its hash keeps it
 *       findable; <em>free</em> when its id is released.</dd>
 *   <dt>lease</dt>
 *   <dd>A reader's hold on a block on the device: a leased block is never moved, evicted or
 *       reused until the lease is released.</dd>
 *   <dt>recent</dt>
 *   <dd>The last {@code recentDeviceBlocks} sealed blocks of every open sequence: kept on the
 *       device, never demoted.</dd>
 *   <dt>in transit</dt>
 *   <dd>A block a move or a read holds: nobody else frees, moves or reuses it until the move
 *       commits or fails; a failed move leaves the source as it was.</dd>
 *   <dt>demote, spill</dt>
 *   <dd>Moves down: <em>demote</em> device to host, <em>spill</em> host to disk (bytes kept).</dd>
 *   <dt>promote, load</dt>
 *   <dd>Moves up: <em>promote</em> to the device, <em>load</em> disk to host (bytes kept below
 *       as a clean copy).</dd>
 *   <dt>evict</dt>
 *   <dd>Bytes dropped to make room: the block's copy in that tier is gone, and with its last copy
 *       the block is freed (or, if referenced, lost: a counted event).</dd>
 *   <dt>retire</dt>
 *   <dd>Free a block id whose bytes are kept by hash alone below (a disk record): a later prefix
 *       match finds the record again by its hash. Not an eviction: no bytes are dropped.</dd>
 *   <dt>settle</dt>
 *   <dd>What the cache does, under its lock, with a store's report of something the store let go
 *       of (a host copy spilled or evicted as the cache's room making asked, a disk record that
 *       went on its own): it decides what the report means for the block as it is now, and a
 *       stale report changes nothing.</dd>
 *   <dt>budget, watermark</dt>
 *   <dd>A <em>budget</em> bounds bytes per tier (per cache and for the whole pool); a
 *       <em>watermark</em> is a utilisation level at which the pressure mode changes.</dd>
 * </dl>
 */
package io.tierkv.core;
