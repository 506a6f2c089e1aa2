//! Lazy animation with a memory budget: clips are loaded on demand by worker threads, the bytes
//! each loaded clip uses are counted, and the least recently used clips are dropped when the total
//! goes over the budget (default 1 GiB).
//!
//! The store never blocks its caller: [`AnimStore::request`] answers at once with the clip when it
//! is loaded, or queues it and answers [`ClipStatus::Queued`]; a UI asks again on a later frame (the
//! optional change callback tells it when to repaint). The most recent request is loaded first.
//! A load that fails is kept as [`ClipStatus::Failed`] with the loader's message (not retried until
//! [`AnimStore::forget`]); a request for a clip whose source, name, length or unit changed replaces
//! the old entry. Cancelled requests are never loaded; a load already running when it is cancelled
//! finishes and its result is dropped.
//!
//! Memory: the bytes counted are those of the loaded [`Clip`] (tracks and skeleton, by capacity).
//! A clip a caller still holds (its `Arc`) after being evicted stays in memory until the caller
//! drops it; the store no longer counts it. A single clip larger than the budget is kept while it is
//! the most recently used, so the shown clip is never evicted by itself; and the clips a caller
//! says are in use ([`AnimStore::set_in_use`]: a UI's clips on screen) are never evicted, even when
//! together they do not fit (two clips shown side by side over the budget were loaded in turn,
//! each evicting the other, on every frame).

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

use crate::core::anim::Clip;
use crate::core::source::ClipRequest;
use crate::core::tags::ClipId;

/// The default memory budget: 1 GiB.
pub const DEFAULT_BUDGET_BYTES: u64 = 1 << 30;

/// A function that loads a clip (the default is [`crate::core::source::load`]).
pub type LoadFn = dyn Fn(&ClipRequest) -> Result<Clip, String> + Send + Sync;

/// A function told about every change (a load finished or failed, clips evicted); a UI passes
/// one that requests a repaint. Called from worker threads, without the store's lock held.
pub type ChangeFn = dyn Fn(ClipId) + Send + Sync;

/// Settings of an [`AnimStore`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoreSettings {
    /// Worker threads loading clips (at least 1). Default 2.
    pub workers: usize,
    /// Memory budget in bytes. Default [`DEFAULT_BUDGET_BYTES`].
    pub budget_bytes: u64,
}

impl Default for StoreSettings {
    fn default() -> Self {
        Self {
            workers: 2,
            budget_bytes: DEFAULT_BUDGET_BYTES,
        }
    }
}

/// Where a clip is in the store.
#[derive(Debug, Clone, PartialEq)]
pub enum ClipStatus {
    /// Not requested (or evicted, cancelled, forgotten).
    NotLoaded,
    /// Waiting for a worker.
    Queued,
    /// A worker is loading it.
    Loading,
    /// Loaded.
    Ready(Arc<Clip>),
    /// The load failed: the loader's message (naming the file and the place).
    Failed(String),
}

impl ClipStatus {
    /// The clip when it is ready.
    pub fn clip(&self) -> Option<&Arc<Clip>> {
        match self {
            ClipStatus::Ready(c) => Some(c),
            _ => None,
        }
    }

    /// True while the clip is queued or loading.
    pub fn is_pending(&self) -> bool {
        matches!(self, ClipStatus::Queued | ClipStatus::Loading)
    }
}

/// A loaded clip, for showing what the store holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadedClip {
    pub clip: ClipId,
    pub name: String,
    pub bytes: u64,
}

/// What the store holds, for a clip browser and a memory display.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StoreSnapshot {
    /// Loaded clips, most recently used first.
    pub loaded: Vec<LoadedClip>,
    /// Clips waiting or loading.
    pub pending: Vec<ClipId>,
    /// Clips whose load failed, with the message.
    pub failed: Vec<(ClipId, String)>,
    pub used_bytes: u64,
    pub budget_bytes: u64,
}

/// Bytes a clip uses on the heap and inline (tracks and skeleton, by capacity).
pub fn clip_bytes(clip: &Clip) -> u64 {
    use std::mem::size_of;
    let sk = &clip.skeleton;
    let names: usize = sk.names.iter().map(String::capacity).sum::<usize>()
        + sk.names.capacity() * size_of::<String>();
    let bytes = size_of::<Clip>()
        + clip.name.capacity()
        + clip.rotations.capacity() * size_of::<glam::Quat>()
        + clip.translations.capacity() * size_of::<glam::Vec3>()
        + clip.scales.capacity() * size_of::<glam::Vec3>()
        + names
        + sk.parents.capacity() * size_of::<Option<usize>>()
        + sk.rest.capacity() * size_of::<crate::core::anim::Transform>()
        + sk.end_sites.capacity() * size_of::<crate::core::anim::EndSite>();
    bytes as u64
}

/// The identity of a request: a change in any of these loads the clip again. Each text after its
/// length, so that a `|` in a path or a clip name cannot make two requests one.
fn request_key(r: &ClipRequest) -> String {
    let source = r.source.key();
    format!(
        "{}:{source}|{}:{}|{}",
        source.len(),
        r.name.len(),
        r.name,
        r.frames
    )
}

enum Slot {
    Queued,
    /// Being loaded by the worker that took load number `id`: only that worker's result lands
    /// (a load dropped and queued again ran twice, and both results were counted).
    Loading {
        cancelled: bool,
        id: u64,
    },
    Loaded {
        clip: Arc<Clip>,
        bytes: u64,
    },
    Failed(String),
}

struct Entry {
    key: String,
    request: ClipRequest,
    slot: Slot,
    last_used: u64,
}

struct State {
    entries: HashMap<ClipId, Entry>,
    /// Clips waiting, the next one to load last.
    queue: Vec<ClipId>,
    budget: u64,
    used: u64,
    clock: u64,
    /// Clips never evicted ([`AnimStore::set_in_use`]).
    in_use: Vec<ClipId>,
    generation: u64,
    /// The number of the next load a worker starts.
    next_load: u64,
    shutdown: bool,
}

struct Shared {
    state: Mutex<State>,
    /// Workers wait here for work.
    work: Condvar,
    /// Blocking loads wait here for results.
    done: Condvar,
    loader: Box<LoadFn>,
    on_change: Mutex<Option<Arc<ChangeFn>>>,
}

/// The lazy animation store (see the module documentation).
pub struct AnimStore {
    shared: Arc<Shared>,
    workers: Vec<JoinHandle<()>>,
}

impl std::fmt::Debug for AnimStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = self.snapshot();
        f.debug_struct("AnimStore")
            .field("loaded", &s.loaded.len())
            .field("used_bytes", &s.used_bytes)
            .field("budget_bytes", &s.budget_bytes)
            .finish()
    }
}

impl AnimStore {
    /// A store loading project clips with [`crate::core::source::load`].
    pub fn new(settings: StoreSettings) -> Self {
        Self::with_loader(settings, crate::core::source::load)
    }

    /// A store with its own loader (tests, or a loader that reads another format).
    pub fn with_loader(
        settings: StoreSettings,
        loader: impl Fn(&ClipRequest) -> Result<Clip, String> + Send + Sync + 'static,
    ) -> Self {
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                entries: HashMap::new(),
                queue: Vec::new(),
                budget: settings.budget_bytes,
                used: 0,
                clock: 0,
                in_use: Vec::new(),
                generation: 0,
                next_load: 0,
                shutdown: false,
            }),
            work: Condvar::new(),
            done: Condvar::new(),
            loader: Box::new(loader),
            on_change: Mutex::new(None),
        });
        let workers = (0..settings.workers.max(1))
            .filter_map(|i| {
                let shared = Arc::clone(&shared);
                std::thread::Builder::new()
                    .name(format!("taglane-anim-{i}"))
                    .spawn(move || worker(&shared))
                    .ok()
            })
            .collect();
        Self { shared, workers }
    }

    /// Sets the function told about every change (see [`ChangeFn`]).
    pub fn set_on_change(&self, f: impl Fn(ClipId) + Send + Sync + 'static) {
        *lock(&self.shared.on_change) = Some(Arc::new(f));
    }

    fn state(&self) -> MutexGuard<'_, State> {
        lock(&self.shared.state)
    }

    /// Asks for a clip: answers at once with its status, queueing it (first in line) when it is not
    /// loaded. A ready clip becomes the most recently used.
    pub fn request(&self, request: &ClipRequest) -> ClipStatus {
        let key = request_key(request);
        let clip = request.clip;
        let mut st = self.state();
        st.clock += 1;
        let now = st.clock;
        let mut requeue = false;
        if let Some(e) = st.entries.get_mut(&clip)
            && e.key == key
        {
            e.last_used = now;
            match &mut e.slot {
                Slot::Loaded { clip, .. } => return ClipStatus::Ready(Arc::clone(clip)),
                Slot::Failed(m) => return ClipStatus::Failed(m.clone()),
                Slot::Loading { cancelled, .. } if !*cancelled => return ClipStatus::Loading,
                Slot::Loading { cancelled, .. } => {
                    // Asked again while the cancelled load runs: keep its result after all.
                    *cancelled = false;
                    return ClipStatus::Loading;
                }
                Slot::Queued => requeue = true,
            }
        }
        if requeue {
            // Move to the front of the line.
            st.queue.retain(|&c| c != clip);
            st.queue.push(clip);
            return ClipStatus::Queued;
        }
        // New, or its source changed: (re)load.
        remove_entry(&mut st, clip);
        st.entries.insert(
            clip,
            Entry {
                key,
                request: request.clone(),
                slot: Slot::Queued,
                last_used: now,
            },
        );
        st.queue.push(clip);
        st.generation += 1;
        drop(st);
        self.shared.work.notify_one();
        ClipStatus::Queued
    }

    /// Requests a clip and waits until it is loaded or has failed (command line, tests, benchmarks).
    pub fn load_blocking(&self, request: &ClipRequest) -> Result<Arc<Clip>, String> {
        self.request(request);
        let key = request_key(request);
        let mut st = self.state();
        loop {
            match st.entries.get(&request.clip).filter(|e| e.key == key) {
                Some(Entry {
                    slot: Slot::Loaded { clip, .. },
                    ..
                }) => return Ok(Arc::clone(clip)),
                Some(Entry {
                    slot: Slot::Failed(m),
                    ..
                }) => return Err(m.clone()),
                Some(_) => {}
                None => {
                    return Err(format!(
                        "clip `{}`: the load was cancelled or evicted",
                        request.name
                    ));
                }
            }
            st = self
                .shared
                .done
                .wait(st)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
    }

    /// The status of a clip, without queueing it or changing its place in the LRU order.
    pub fn status(&self, clip: ClipId) -> ClipStatus {
        match self.state().entries.get(&clip).map(|e| &e.slot) {
            None => ClipStatus::NotLoaded,
            Some(Slot::Queued) => ClipStatus::Queued,
            Some(Slot::Loading { .. }) => ClipStatus::Loading,
            Some(Slot::Loaded { clip, .. }) => ClipStatus::Ready(Arc::clone(clip)),
            Some(Slot::Failed(m)) => ClipStatus::Failed(m.clone()),
        }
    }

    /// Cancels a queued or running load of `clip`; returns true when there was one.
    pub fn cancel(&self, clip: ClipId) -> bool {
        let mut st = self.state();
        let cancelled = cancel_one(&mut st, clip);
        if cancelled {
            st.generation += 1;
        }
        drop(st);
        // A blocking load of this clip waiting for its result learns it will not come.
        self.shared.done.notify_all();
        cancelled
    }

    /// Cancels every queued and running load; returns how many.
    pub fn cancel_all(&self) -> usize {
        let mut st = self.state();
        let pending: Vec<ClipId> = st
            .entries
            .iter()
            .filter(|(_, e)| matches!(e.slot, Slot::Queued | Slot::Loading { .. }))
            .map(|(&c, _)| c)
            .collect();
        let n = pending
            .into_iter()
            .filter(|&c| cancel_one(&mut st, c))
            .count();
        st.generation += 1;
        drop(st);
        self.shared.done.notify_all();
        n
    }

    /// Drops everything the store knows about `clip` (a loaded clip, a failure, a queued load).
    pub fn forget(&self, clip: ClipId) {
        let mut st = self.state();
        if matches!(
            st.entries.get(&clip).map(|e| &e.slot),
            Some(Slot::Loading { .. })
        ) {
            cancel_one(&mut st, clip);
        } else {
            remove_entry(&mut st, clip);
        }
        st.generation += 1;
        drop(st);
        self.shared.done.notify_all();
    }

    /// Drops every clip and cancels every load (a project was closed).
    pub fn clear(&self) {
        self.cancel_all();
        let mut st = self.state();
        let ids: Vec<ClipId> = st.entries.keys().copied().collect();
        for c in ids {
            if !matches!(
                st.entries.get(&c).map(|e| &e.slot),
                Some(Slot::Loading { .. })
            ) {
                remove_entry(&mut st, c);
            }
        }
        st.generation += 1;
    }

    /// Sets the memory budget in bytes, evicting least recently used clips to fit.
    pub fn set_budget(&self, bytes: u64) {
        let mut st = self.state();
        st.budget = bytes;
        evict(&mut st, None);
        st.generation += 1;
    }

    /// Marks `clips` as in use (the clips a UI shows), replacing the last set: they are never
    /// evicted, even past the budget; clips that leave the set are evicted if the others need
    /// their room.
    pub fn set_in_use(&self, clips: &[ClipId]) {
        let mut st = self.state();
        if st.in_use == clips {
            return;
        }
        st.in_use = clips.to_vec();
        if !evict(&mut st, None).is_empty() {
            st.generation += 1;
        }
    }

    /// The memory budget in bytes.
    pub fn budget(&self) -> u64 {
        self.state().budget
    }

    /// Bytes used by the loaded clips.
    pub fn used_bytes(&self) -> u64 {
        self.state().used
    }

    /// A number that changes whenever the store does (a UI compares it to know when to redraw).
    pub fn generation(&self) -> u64 {
        self.state().generation
    }

    /// What the store holds.
    pub fn snapshot(&self) -> StoreSnapshot {
        let st = self.state();
        let mut loaded: Vec<(u64, LoadedClip)> = Vec::new();
        let mut pending = Vec::new();
        let mut failed = Vec::new();
        for (&c, e) in &st.entries {
            match &e.slot {
                Slot::Loaded { bytes, .. } => loaded.push((
                    e.last_used,
                    LoadedClip {
                        clip: c,
                        name: e.request.name.clone(),
                        bytes: *bytes,
                    },
                )),
                Slot::Queued
                | Slot::Loading {
                    cancelled: false, ..
                } => pending.push(c),
                Slot::Loading {
                    cancelled: true, ..
                } => {}
                Slot::Failed(m) => failed.push((c, m.clone())),
            }
        }
        loaded.sort_by_key(|l| std::cmp::Reverse(l.0));
        pending.sort_unstable();
        failed.sort();
        StoreSnapshot {
            loaded: loaded.into_iter().map(|(_, l)| l).collect(),
            pending,
            failed,
            used_bytes: st.used,
            budget_bytes: st.budget,
        }
    }
}

impl Drop for AnimStore {
    fn drop(&mut self) {
        {
            let mut st = self.state();
            st.shutdown = true;
            st.queue.clear();
        }
        self.shared.work.notify_all();
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic in a loader is caught; a poisoned lock can only come from a bug here, and the state
    // stays consistent (every change is made in one step under the lock).
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Removes an entry that is not loading, releasing its bytes.
fn remove_entry(st: &mut State, clip: ClipId) {
    if let Some(e) = st.entries.remove(&clip) {
        if let Slot::Loaded { bytes, .. } = e.slot {
            st.used -= bytes;
        }
        if matches!(e.slot, Slot::Queued) {
            st.queue.retain(|&c| c != clip);
        }
    }
}

fn cancel_one(st: &mut State, clip: ClipId) -> bool {
    match st.entries.get_mut(&clip).map(|e| &mut e.slot) {
        Some(Slot::Queued) => {
            remove_entry(st, clip);
            true
        }
        Some(Slot::Loading { cancelled, .. }) if !*cancelled => {
            *cancelled = true;
            true
        }
        _ => false,
    }
}

/// Evicts least recently used loaded clips until the used bytes fit the budget; `keep` (the clip
/// just loaded) and the clips in use are never evicted.
fn evict(st: &mut State, keep: Option<ClipId>) -> Vec<ClipId> {
    let mut evicted = Vec::new();
    while st.used > st.budget {
        let victim = st
            .entries
            .iter()
            .filter(|(c, e)| {
                Some(**c) != keep && !st.in_use.contains(c) && matches!(e.slot, Slot::Loaded { .. })
            })
            .min_by_key(|(_, e)| e.last_used)
            .map(|(&c, _)| c);
        let Some(c) = victim else {
            break;
        };
        remove_entry(st, c);
        evicted.push(c);
    }
    evicted
}

fn worker(shared: &Shared) {
    loop {
        let (clip, request, id) = {
            let mut st = lock(&shared.state);
            loop {
                if st.shutdown {
                    return;
                }
                if let Some(c) = st.queue.pop() {
                    let id = st.next_load;
                    if let Some(e) = st.entries.get_mut(&c)
                        && matches!(e.slot, Slot::Queued)
                    {
                        e.slot = Slot::Loading {
                            cancelled: false,
                            id,
                        };
                        let request = e.request.clone();
                        st.next_load += 1;
                        break (c, request, id);
                    }
                    continue;
                }
                st = shared
                    .work
                    .wait(st)
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
            }
        };
        let result = catch_unwind(AssertUnwindSafe(|| (shared.loader)(&request)))
            .unwrap_or_else(|_| Err(format!("clip `{}`: the loader panicked", request.name)));
        {
            let mut st = lock(&shared.state);
            // This worker's load, still wanted: its entry is the one it took (not one dropped
            // and asked for again, which another worker loads and counts).
            let (current, cancelled) = match st.entries.get(&clip).map(|e| &e.slot) {
                Some(Slot::Loading { cancelled, id: i }) if *i == id => (true, *cancelled),
                _ => (false, false),
            };
            if current && cancelled {
                st.entries.remove(&clip);
            } else if current {
                let slot = match result {
                    Ok(c) => {
                        let bytes = clip_bytes(&c);
                        st.used += bytes;
                        Slot::Loaded {
                            clip: Arc::new(c),
                            bytes,
                        }
                    }
                    Err(m) => Slot::Failed(m),
                };
                if let Some(e) = st.entries.get_mut(&clip) {
                    e.slot = slot;
                }
                evict(&mut st, Some(clip));
            }
            st.generation += 1;
        }
        let notify = lock(&shared.on_change).clone();
        if let Some(f) = notify {
            f(clip);
        }
        shared.done.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::mpsc;
    use std::time::Duration;

    use super::*;
    use crate::core::anim::{Skeleton, Transform};
    use crate::core::project::{ClipSource, Project, resolve};

    /// A clip of `frames` frames on a one-joint skeleton.
    fn clip(name: &str, frames: usize) -> Clip {
        Clip {
            name: name.to_owned(),
            skeleton: Skeleton::new(vec!["root".into()], vec![None], vec![Transform::IDENTITY]),
            fps: 30.0,
            frame_count: frames,
            unit_cm: 1.0,
            rotations: vec![glam::Quat::IDENTITY; frames],
            translations: vec![glam::Vec3::ZERO; frames],
            scales: vec![glam::Vec3::ONE; frames],
        }
    }

    fn req(id: ClipId, name: &str) -> ClipRequest {
        ClipRequest {
            clip: id,
            name: name.to_owned(),
            frames: 1000,
            source: ClipSource::File(format!("/{name}.bvh").into()),
        }
    }

    /// A loader making 1000-frame clips; names starting with `bad` fail.
    fn synthetic(r: &ClipRequest) -> Result<Clip, String> {
        if r.name.starts_with("bad") {
            Err(format!("/{}.bvh: line 7: expected ROOT or MOTION", r.name))
        } else {
            Ok(clip(&r.name, 1000))
        }
    }

    fn one_clip_bytes() -> u64 {
        clip_bytes(&clip("c0", 1000))
    }

    fn loaded_names(store: &AnimStore) -> Vec<String> {
        store
            .snapshot()
            .loaded
            .into_iter()
            .map(|l| l.name)
            .collect()
    }

    #[test]
    fn the_budget_is_respected() {
        let size = one_clip_bytes();
        assert!(size > 40_000, "{size}");
        let store = AnimStore::with_loader(
            StoreSettings {
                workers: 2,
                budget_bytes: size * 5 / 2,
            },
            synthetic,
        );
        for i in 0..10 {
            store.load_blocking(&req(i, &format!("c{i}"))).unwrap();
            assert!(store.used_bytes() <= store.budget(), "after clip {i}");
        }
        assert_eq!(loaded_names(&store), vec!["c9", "c8"]);
        assert_eq!(store.used_bytes(), 2 * size);
        // A smaller budget evicts at once; the last clip stays even when it alone is too big.
        store.set_budget(size / 2);
        assert_eq!(loaded_names(&store), Vec::<String>::new());
        store.load_blocking(&req(3, "c3")).unwrap();
        assert_eq!(loaded_names(&store), vec!["c3"]);
        assert_eq!(store.snapshot().used_bytes, size);
    }

    #[test]
    fn clips_in_use_are_never_evicted_even_past_the_budget() {
        let size = one_clip_bytes();
        let store = AnimStore::with_loader(
            StoreSettings {
                workers: 1,
                budget_bytes: size * 3 / 2,
            },
            synthetic,
        );
        // Two clips shown side by side that do not fit together: both stay.
        store.set_in_use(&[0, 1]);
        store.load_blocking(&req(0, "a")).unwrap();
        store.load_blocking(&req(1, "b")).unwrap();
        assert_eq!(loaded_names(&store), vec!["b", "a"]);
        assert!(store.request(&req(0, "a")).clip().is_some());
        // A third clip not shown is loaded (asked for) and evicted by nothing in use: it stays
        // as the one just loaded, past the budget, until the next load or change of the set.
        store.load_blocking(&req(2, "c")).unwrap();
        assert_eq!(loaded_names(&store), vec!["c", "a", "b"]);
        // `b` leaves the screen: it goes, and so does `c` (neither is in use).
        store.set_in_use(&[0]);
        assert_eq!(loaded_names(&store), vec!["a"]);
        // A lower budget keeps the clip in use too.
        store.set_budget(0);
        assert_eq!(loaded_names(&store), vec!["a"]);
        store.set_in_use(&[]);
        assert_eq!(loaded_names(&store), Vec::<String>::new());
    }

    #[test]
    fn the_least_recently_used_clip_goes_first() {
        let size = one_clip_bytes();
        let store = AnimStore::with_loader(
            StoreSettings {
                workers: 1,
                budget_bytes: size * 3,
            },
            synthetic,
        );
        for (i, n) in ["a", "b", "c"].iter().enumerate() {
            store.load_blocking(&req(i as ClipId, n)).unwrap();
        }
        // Using `a` again makes `b` the oldest.
        assert!(store.request(&req(0, "a")).clip().is_some());
        store.load_blocking(&req(3, "d")).unwrap();
        assert_eq!(loaded_names(&store), vec!["d", "a", "c"]);
        assert_eq!(store.status(1), ClipStatus::NotLoaded);
        // `status` does not count as a use.
        assert!(store.status(2).clip().is_some());
        store.load_blocking(&req(4, "e")).unwrap();
        assert_eq!(loaded_names(&store), vec!["e", "d", "a"]);
    }

    #[test]
    fn a_failing_load_is_reported_and_kept() {
        let calls = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&calls);
        let store = AnimStore::with_loader(StoreSettings::default(), move |r| {
            counted.fetch_add(1, Ordering::SeqCst);
            synthetic(r)
        });
        let e = store.load_blocking(&req(0, "bad")).unwrap_err();
        assert!(e.contains("bad.bvh: line 7"), "{e}");
        assert!(matches!(store.request(&req(0, "bad")), ClipStatus::Failed(m) if m == e));
        assert_eq!(store.snapshot().failed, vec![(0, e)]);
        assert_eq!(
            calls.load(Ordering::SeqCst),
            1,
            "not retried on every request"
        );
        store.forget(0);
        assert!(store.load_blocking(&req(0, "bad")).is_err());
        assert_eq!(calls.load(Ordering::SeqCst), 2);
        assert_eq!(store.used_bytes(), 0);
    }

    #[test]
    fn a_panicking_loader_is_a_failure() {
        let store = AnimStore::with_loader(StoreSettings::default(), |_| panic!("boom"));
        let e = store.load_blocking(&req(0, "x")).unwrap_err();
        assert!(e.contains("panicked"), "{e}");
        // The worker survived.
        assert!(store.load_blocking(&req(1, "y")).is_err());
    }

    /// A store of `workers` workers whose loader says on the returned receiver which load it
    /// starts, then waits for a go on the returned sender, so that the order of events is fixed
    /// (or for 20 s, so that a failed test does not hang its workers). The sender is dropped
    /// before the store (bindings drop in reverse order).
    fn gated(workers: usize) -> (AnimStore, mpsc::Sender<()>, mpsc::Receiver<String>) {
        let (go_tx, go_rx) = mpsc::channel::<()>();
        let go_rx = Mutex::new(go_rx);
        let (started_tx, started_rx) = mpsc::channel::<String>();
        let started_tx = Mutex::new(started_tx);
        let store = AnimStore::with_loader(
            StoreSettings {
                workers,
                budget_bytes: DEFAULT_BUDGET_BYTES,
            },
            move |r| {
                lock(&started_tx).send(r.name.clone()).unwrap();
                let _ = lock(&go_rx).recv_timeout(Duration::from_secs(20));
                synthetic(r)
            },
        );
        (store, go_tx, started_rx)
    }

    #[test]
    fn cancelled_loads_are_not_kept() {
        let (store, go_tx, started_rx) = gated(1);
        let wait = Duration::from_secs(10);
        assert_eq!(store.request(&req(0, "a")), ClipStatus::Queued);
        assert_eq!(started_rx.recv_timeout(wait).unwrap(), "a");
        assert_eq!(store.status(0), ClipStatus::Loading);
        // `b` and `c` wait behind `a`; `c` (the newest) is next.
        store.request(&req(1, "b"));
        store.request(&req(2, "c"));
        assert_eq!(store.snapshot().pending, vec![0, 1, 2]);
        assert!(store.cancel(2));
        assert!(store.cancel(0));
        assert!(!store.cancel(0), "already cancelled");
        go_tx.send(()).unwrap();
        // `b` is loaded next; `c` never starts, and `a`'s result is dropped.
        assert_eq!(started_rx.recv_timeout(wait).unwrap(), "b");
        go_tx.send(()).unwrap();
        assert!(store.load_blocking(&req(1, "b")).is_ok());
        assert_eq!(loaded_names(&store), vec!["b"]);
        assert_eq!(store.status(0), ClipStatus::NotLoaded);
        assert_eq!(store.status(2), ClipStatus::NotLoaded);
        assert!(started_rx.try_recv().is_err());
        // Cancel everything while a load runs: nothing is kept.
        store.request(&req(3, "d"));
        assert_eq!(started_rx.recv_timeout(wait).unwrap(), "d");
        store.request(&req(4, "e"));
        assert_eq!(store.cancel_all(), 2);
        go_tx.send(()).unwrap();
        drop(go_tx);
        drop(store);
        assert!(started_rx.try_recv().is_err(), "e never started");
    }

    /// A load dropped while it runs (its request changed, then changed back) and asked for again
    /// runs twice on two workers: only the last lands, and its bytes are counted once (both
    /// were counted, and the first never subtracted).
    #[test]
    fn a_load_asked_for_again_while_it_runs_is_counted_once() {
        let (store, go_tx, started_rx) = gated(3);
        let wait = Duration::from_secs(10);
        store.request(&req(0, "a"));
        assert_eq!(started_rx.recv_timeout(wait).unwrap(), "a");
        // The clip's unit changed, then changed back: the first load's entry is dropped and the
        // same request queued again, which the second worker starts.
        let mut other = req(0, "a");
        other.source = ClipSource::FileWithUnit {
            path: "/a.bvh".into(),
            unit_cm: 5.644,
        };
        store.request(&other);
        assert_eq!(started_rx.recv_timeout(wait).unwrap(), "a");
        store.request(&req(0, "a"));
        assert_eq!(started_rx.recv_timeout(wait).unwrap(), "a");
        for _ in 0..3 {
            go_tx.send(()).unwrap();
        }
        let loaded = store.load_blocking(&req(0, "a")).unwrap();
        // Let every worker finish before counting.
        drop(go_tx);
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(store.snapshot().loaded.len(), 1);
        assert_eq!(store.used_bytes(), clip_bytes(&loaded));
    }

    #[test]
    fn a_changed_request_loads_again() {
        let store = AnimStore::with_loader(StoreSettings::default(), synthetic);
        let first = store.load_blocking(&req(0, "a")).unwrap();
        let mut moved = req(0, "a");
        moved.source = ClipSource::FileWithUnit {
            path: "/a.bvh".into(),
            unit_cm: 5.644,
        };
        let second = store.load_blocking(&moved).unwrap();
        assert!(!Arc::ptr_eq(&first, &second));
        assert_eq!(store.snapshot().loaded.len(), 1);
        assert_eq!(store.used_bytes(), clip_bytes(&second));
    }

    #[test]
    fn the_default_loader_reads_project_clips() {
        let project = Project::demo();
        let store = AnimStore::new(StoreSettings::default());
        let changes = Arc::new(AtomicUsize::new(0));
        let seen = Arc::clone(&changes);
        store.set_on_change(move |_| {
            seen.fetch_add(1, Ordering::SeqCst);
        });
        for id in 0..3 {
            let r = resolve(&project, id).unwrap();
            let c = store.load_blocking(&r).unwrap();
            assert_eq!(c.frame_count as u32, project.doc.clips[id as usize].frames);
        }
        assert_eq!(store.snapshot().loaded.len(), 3);
        // The callback runs on the worker, after the state changed: wait for the last one.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while changes.load(Ordering::SeqCst) < 3 && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(changes.load(Ordering::SeqCst), 3);
        store.clear();
        assert_eq!(store.used_bytes(), 0);
    }
}
