//! Devices: where a tensor's memory lives. Only the CPU holds tensors in this build, but
//! every device argument is parsed with torch's spellings and rules (`"cpu"`, `"cuda"`,
//! `"cuda:1"`, `"cpu:0"`, an integer for a CUDA index), so that asking for any other
//! device fails loudly with the error torch gives when that backend is not built,
//! instead of quietly giving a CPU tensor.

use crate::error::{Error, Result};

/// The device types torch knows, in the order its parse error lists them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeviceType {
    Cpu,
    Cuda,
    Ipu,
    Xpu,
    Mkldnn,
    Opengl,
    Opencl,
    Ideep,
    Hip,
    Ve,
    Fpga,
    Maia,
    Xla,
    Lazy,
    Vulkan,
    Mps,
    Meta,
    Hpu,
    Mtia,
    PrivateUse1,
}

use DeviceType::*;

const ALL_TYPES: [DeviceType; 20] = [
    Cpu,
    Cuda,
    Ipu,
    Xpu,
    Mkldnn,
    Opengl,
    Opencl,
    Ideep,
    Hip,
    Ve,
    Fpga,
    Maia,
    Xla,
    Lazy,
    Vulkan,
    Mps,
    Meta,
    Hpu,
    Mtia,
    PrivateUse1,
];

impl DeviceType {
    /// The spelling in device strings and `device.type`.
    pub fn name(self) -> &'static str {
        match self {
            Cpu => "cpu",
            Cuda => "cuda",
            Ipu => "ipu",
            Xpu => "xpu",
            Mkldnn => "mkldnn",
            Opengl => "opengl",
            Opencl => "opencl",
            Ideep => "ideep",
            Hip => "hip",
            Ve => "ve",
            Fpga => "fpga",
            Maia => "maia",
            Xla => "xla",
            Lazy => "lazy",
            Vulkan => "vulkan",
            Mps => "mps",
            Meta => "meta",
            Hpu => "hpu",
            Mtia => "mtia",
            PrivateUse1 => "privateuseone",
        }
    }

    /// The dispatcher's name for the backend (used in torch's "Could not run" error).
    fn backend_name(self) -> &'static str {
        match self {
            Cpu => "CPU",
            Cuda => "CUDA",
            Ipu => "IPU",
            Xpu => "XPU",
            Mkldnn => "MkldnnCPU",
            Opengl => "OPENGL",
            Opencl => "OPENCL",
            Ideep => "IDEEP",
            Hip => "HIP",
            Ve => "VE",
            Fpga => "FPGA",
            Maia => "MAIA",
            Xla => "XLA",
            Lazy => "Lazy",
            Vulkan => "Vulkan",
            Mps => "MPS",
            Meta => "Meta",
            Hpu => "HPU",
            Mtia => "MTIA",
            PrivateUse1 => "PrivateUse1",
        }
    }

    pub fn parse(s: &str) -> Option<DeviceType> {
        ALL_TYPES.iter().copied().find(|t| t.name() == s)
    }
}

/// A device: a type and an optional index (`cuda` vs `cuda:1`). The index is torch's
/// 16-bit device index, never negative.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Device {
    pub kind: DeviceType,
    pub index: Option<i16>,
}

/// Why a device cannot be used here. CUDA, XPU and MTIA fail in torch's lazy
/// initialisation with an `AssertionError`, which the core error type has no variant for.
#[derive(Clone, Debug)]
pub enum Unavailable {
    NotCompiled(String),
    Other(Error),
}

/// What the device was asked for: torch words the refusal differently for a tensor
/// made by an allocating factory (the dispatcher's "Could not run '<op>'") and for a
/// copy to the device (`.to`, `tensor(data, device=...)`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Use {
    Allocate(&'static str),
    Copy,
}

impl Device {
    pub const CPU: Device = Device {
        kind: Cpu,
        index: None,
    };

    /// `torch.device(type, index)`: `type` must not carry an index of its own.
    pub fn new(type_str: &str, index: Option<i64>) -> Result<Device> {
        let d = Device::parse(type_str)?;
        match index {
            None => Ok(d),
            Some(_) if d.index.is_some() => Err(Error::runtime(format!(
                "type (string) must not include an index because index was passed explicitly: {type_str}"
            ))),
            Some(i) => Ok(Device {
                kind: d.kind,
                index: Some(checked_index(i)?),
            }),
        }
    }

    /// A bare integer means a CUDA device index, as in torch.
    pub fn from_index(i: i64) -> Result<Device> {
        Ok(Device {
            kind: Cuda,
            index: Some(checked_index(i)?),
        })
    }

    /// Parse `"type"` or `"type:index"` with torch's errors.
    pub fn parse(s: &str) -> Result<Device> {
        if s.is_empty() {
            return Err(Error::runtime("Device string must not be empty"));
        }
        let invalid = || Error::runtime(format!("Invalid device string: '{s}'"));
        let (type_part, index_part) = match s.split_once(':') {
            Some((t, i)) => (t, Some(i)),
            None => (s, None),
        };
        if !type_part
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            return Err(invalid());
        }
        let kind = DeviceType::parse(type_part).ok_or_else(|| {
            let names: Vec<&str> = ALL_TYPES.iter().map(|t| t.name()).collect();
            Error::runtime(format!(
                "Expected one of {} device type at start of device string: {type_part}",
                names.join(", ")
            ))
        })?;
        let index = match index_part {
            None => None,
            Some(i) => Some(parse_index(s, i).ok_or_else(invalid)??),
        };
        Ok(Device { kind, index })
    }

    /// `Ok` when tensors can live on this device in this build (only the CPU); otherwise
    /// the error torch raises when the device's backend was not built in.
    pub fn check_available(&self, usage: Use) -> std::result::Result<(), Unavailable> {
        let not_compiled = |what: &str| {
            Unavailable::NotCompiled(format!("Torch not compiled with {what} enabled"))
        };
        match self.kind {
            Cpu => Ok(()),
            Cuda => Err(not_compiled("CUDA")),
            Xpu => Err(not_compiled("XPU")),
            Mtia => Err(Unavailable::NotCompiled(
                "Torch not compiled with MTIA enabled. Ensure you have `import mtia.host_runtime.torch_mtia.dynamic_library` in your python src file and include `//mtia/host_runtime/torch_mtia:torch_mtia` as your target dependency!".into(),
            )),
            kind => Err(Unavailable::Other(match usage {
                Use::Copy => Error::runtime(format!(
                    "PyTorch is not linked with support for {} devices",
                    kind.name()
                )),
                Use::Allocate(op) => Error::not_implemented(format!(
                    "Could not run '{op}' with arguments from the '{}' backend. This could be \
                     because the operator doesn't exist for this backend, or was omitted during \
                     the selective/custom build process (if using custom build). If you are a \
                     Facebook employee using PyTorch on mobile, please visit \
                     https://fburl.com/ptmfixes for possible resolutions. '{op}' is only \
                     available for these backends: [CPU].",
                    kind.backend_name()
                )),
            })),
        }
    }
}

impl std::fmt::Display for Device {
    /// torch's `str(device)`: `cpu`, `cuda:1`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.index {
            Some(i) => write!(f, "{}:{i}", self.kind.name()),
            None => f.write_str(self.kind.name()),
        }
    }
}

fn checked_index(i: i64) -> Result<i16> {
    if i < 0 {
        return Err(Error::runtime("Device index must not be negative"));
    }
    i16::try_from(i).map_err(|_| Error::runtime(format!("Device index {i} is out of range")))
}

/// The index after the colon: decimal digits without a leading zero (torch refuses
/// `cuda:01`, `cuda:-1`, `cuda: 1`). `None` for a malformed index; `Some(Err)` for one
/// that does not fit.
fn parse_index(whole: &str, digits: &str) -> Option<Result<i16>> {
    let well_formed = !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits == "0" || !digits.starts_with('0'));
    if !well_formed {
        return None;
    }
    Some(digits.parse::<i16>().map_err(|_| {
        Error::runtime(format!(
            "Could not parse device index '{digits}' in device string '{whole}'"
        ))
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_torch_spellings() {
        assert_eq!(Device::parse("cpu").unwrap(), Device::CPU);
        let c1 = Device::parse("cuda:1").unwrap();
        assert_eq!((c1.kind, c1.index), (Cuda, Some(1)));
        assert_eq!(Device::parse("cpu:0").unwrap().to_string(), "cpu:0");
        assert_eq!(Device::from_index(3).unwrap().to_string(), "cuda:3");
    }

    #[test]
    fn refuses_malformed_strings() {
        for s in [
            "cuda:", "cuda:01", "cuda:-1", "cuda: 1", "cpu:0:1", " cpu", "cuda:1a",
        ] {
            assert_eq!(
                Device::parse(s).unwrap_err().to_string(),
                format!("Invalid device string: '{s}'"),
                "{s}"
            );
        }
        assert!(Device::parse("CUDA")
            .unwrap_err()
            .to_string()
            .starts_with("Expected one of cpu, cuda, ipu"));
        assert_eq!(
            Device::parse("").unwrap_err().to_string(),
            "Device string must not be empty"
        );
        assert!(Device::parse("cuda:99999999999").is_err());
        assert!(Device::from_index(-1).is_err());
        assert!(Device::new("cuda:1", Some(1)).is_err());
    }

    #[test]
    fn only_cpu_is_available() {
        assert!(Device::CPU.check_available(Use::Copy).is_ok());
        assert!(Device::parse("cpu:3")
            .unwrap()
            .check_available(Use::Copy)
            .is_ok());
        assert!(matches!(
            Device::parse("cuda").unwrap().check_available(Use::Copy),
            Err(Unavailable::NotCompiled(m)) if m == "Torch not compiled with CUDA enabled"
        ));
        assert!(matches!(
            Device::parse("mps")
                .unwrap()
                .check_available(Use::Allocate("aten::empty.memory_format")),
            Err(Unavailable::Other(Error::NotImplemented(_)))
        ));
    }
}
