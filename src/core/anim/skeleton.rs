//! Skeletons: joint names, parents and rest (bind) local transforms.

use glam::{Quat, Vec3};

/// A local (parent-from-child) or model-space transform: translate * rotate * scale.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Transform {
    pub translation: Vec3,
    pub rotation: Quat,
    pub scale: Vec3,
}

impl Transform {
    pub const IDENTITY: Self = Self {
        translation: Vec3::ZERO,
        rotation: Quat::IDENTITY,
        scale: Vec3::ONE,
    };

    /// Composes `self * child`: the transform of a child expressed in this transform's parent space.
    #[inline]
    pub fn mul_transform(&self, child: &Transform) -> Transform {
        Transform {
            translation: self.translation + self.rotation * (self.scale * child.translation),
            rotation: (self.rotation * child.rotation).normalize(),
            scale: self.scale * child.scale,
        }
    }

    /// Applies the transform to a point.
    #[inline]
    pub fn transform_point(&self, p: Vec3) -> Vec3 {
        self.translation + self.rotation * (self.scale * p)
    }
}

impl Default for Transform {
    fn default() -> Self {
        Self::IDENTITY
    }
}

/// A BVH `End Site`: a fixed leaf point below a joint. Not a joint (it has no channels and is not
/// counted in [`Skeleton::len`]); kept so a BVH export reproduces the file's leaf offsets.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EndSite {
    /// The joint the End Site hangs from.
    pub parent: usize,
    /// Offset from that joint, in file units.
    pub offset: Vec3,
}

/// A joint hierarchy. Joints are stored so that a parent's index is always lower than its
/// children's (`parents[i] < i`), which lets forward kinematics run in one pass in index order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Skeleton {
    /// Joint names, unique within the skeleton.
    pub names: Vec<String>,
    /// Parent index of each joint; `None` for roots. Invariant: `parents[i] < Some(i)`.
    pub parents: Vec<Option<usize>>,
    /// Rest local transform of each joint (BVH OFFSET, glTF node transform).
    pub rest: Vec<Transform>,
    /// BVH End Sites (leaf offsets); empty for skeletons from other sources. Construct with
    /// `..Default::default()` or [`Skeleton::new`] when there are none.
    pub end_sites: Vec<EndSite>,
}

impl Skeleton {
    /// A skeleton without End Sites. Does not validate: call [`Skeleton::validate`].
    pub fn new(names: Vec<String>, parents: Vec<Option<usize>>, rest: Vec<Transform>) -> Self {
        Self {
            names,
            parents,
            rest,
            end_sites: Vec::new(),
        }
    }

    /// Indices of the joints from the root down to `joint` (inclusive), or `None` when `joint` is out
    /// of range or a parent index breaks the ordering invariant.
    pub fn chain_to(&self, joint: usize) -> Option<Vec<usize>> {
        if joint >= self.len() {
            return None;
        }
        let mut chain = vec![joint];
        let mut j = joint;
        while let Some(p) = *self.parents.get(j)? {
            if p >= j {
                return None;
            }
            chain.push(p);
            j = p;
        }
        chain.reverse();
        Some(chain)
    }

    /// Number of joints.
    #[inline]
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// True when the skeleton has no joint.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Index of the joint with this name.
    pub fn find(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }

    /// Checks the invariants: equal array lengths and parents before children.
    pub fn validate(&self) -> Result<(), String> {
        if self.parents.len() != self.names.len() || self.rest.len() != self.names.len() {
            return Err(format!(
                "skeleton arrays differ in length: {} names, {} parents, {} rest transforms",
                self.names.len(),
                self.parents.len(),
                self.rest.len()
            ));
        }
        for (i, p) in self.parents.iter().enumerate() {
            if let Some(p) = *p
                && p >= i
            {
                return Err(format!(
                    "joint {i} ({}) has parent {p}, which is not before it",
                    self.names[i]
                ));
            }
        }
        for (k, e) in self.end_sites.iter().enumerate() {
            if e.parent >= self.len() {
                return Err(format!(
                    "end site {k} hangs from joint {}, but there are only {} joints",
                    e.parent,
                    self.len()
                ));
            }
        }
        Ok(())
    }
}
