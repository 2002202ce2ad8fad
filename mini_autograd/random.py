"""PyTorch's CPU random numbers, reproduced: `manual_seed(s)` then randn, rand, randint, randperm,
normal or bernoulli gives the numbers torch gives after the same seed.

torch's CPU generator is a 32-bit Mersenne Twister (numpy has the same one, seeded the same way);
what differs between the distributions is how its words are turned into numbers, which is what
the methods below copy from ATen (`core/TransformationHelper.h`, `native/cpu/DistributionTemplates.h`).
"""

import math

import numpy as np

DEFAULT_SEED = 67280421310721  # torch's documented default seed (c10's default_rng_seed_val)
_FLOAT_MASK = np.uint64((1 << 24) - 1)  # a float32 uniform takes 24 bits of one 32-bit word
_DOUBLE_MASK = np.uint64((1 << 53) - 1)  # a float64 uniform takes 53 bits of two words
_FILL_BLOCK = 16  # torch draws normals for 16 or more floats in blocks of 16


class Generator:
    """A random number generator whose streams are torch.Generator's on the CPU."""

    def __init__(self, seed=DEFAULT_SEED):
        self.manual_seed(seed)

    def manual_seed(self, seed):
        """Restart the stream from `seed` (only its low 32 bits count, as in torch)."""
        seed = int(seed)
        self._seed = seed
        self._bits = np.random.MT19937(0)
        self._bits._legacy_seeding(seed & 0xFFFFFFFF)
        self._next_normal = None  # Box-Muller makes normals in pairs; torch keeps the spare one
        return self

    def initial_seed(self):
        """The seed the stream started from."""
        return self._seed

    def get_state(self):
        """The generator's whole state, to give back to set_state."""
        return {"bits": self._bits.state, "next_normal": self._next_normal, "seed": self._seed}

    def set_state(self, state):
        """Continue from a state that get_state returned."""
        self._bits.state = state["bits"]
        self._next_normal, self._seed = state["next_normal"], state["seed"]
        return self

    def _words(self, n):
        """n 32-bit words of the Mersenne Twister, as uint64."""
        return self._bits.random_raw(n).astype(np.uint64)

    def _words64(self, n):
        """n 64-bit numbers, each from two words (the first one high)."""
        words = self._words(2 * n)
        return (words[0::2] << np.uint64(32)) | words[1::2]

    def _unit(self, n, np_dtype):
        """n uniform numbers in [0, 1): 24 bits per float32 (and float16), 53 per float64."""
        if np_dtype == np.float64:
            return (self._words64(n) & _DOUBLE_MASK).astype(np.float64) * 2.0**-53
        return (self._words(n) & _FLOAT_MASK).astype(np.float64) * 2.0**-24

    def uniform(self, shape, low=0.0, high=1.0, np_dtype=np.float32):
        """Uniform samples in [low, high): low + u * (high - low)."""
        np_dtype = np.dtype(np_dtype)
        low, high = np_dtype.type(low), np_dtype.type(high)  # torch rounds the bounds first
        u = self._unit(math.prod(shape), np_dtype)
        # torch rounds u * (high - low) + low once (a fused multiply-add): extended precision
        # then one cast does the same for float64; for float32, float64 is enough
        work = np.longdouble if np_dtype == np.float64 else np.float64
        values = u.astype(work) * work(high - low) + work(low)
        return values.astype(np_dtype).reshape(shape)

    def normal(self, shape, mean=0.0, std=1.0, np_dtype=np.float32):
        """Normal samples by Box-Muller, in the order torch makes them."""
        n = math.prod(shape)
        if n >= _FILL_BLOCK:
            values = self._normal_blocks(n, mean, std, np_dtype)
        else:
            values = self._normal_pairs(n, mean, std).astype(np_dtype)
        return values.reshape(shape)

    def _normal_pairs(self, n, mean, std):
        """Few normals, one at a time: each pair of float64 uniforms gives cos, then sin, spare."""
        out = []
        if n and self._next_normal is not None:
            out.append(self._next_normal)
            self._next_normal = None
        missing = n - len(out)
        pairs = (missing + 1) // 2
        u = self._unit(2 * pairs, np.float64).reshape(pairs, 2)
        radius = np.sqrt(-2.0 * np.log1p(-u[:, 1]))
        angle = 2.0 * math.pi * u[:, 0]
        both = np.stack([radius * np.cos(angle), radius * np.sin(angle)], axis=1).ravel()
        out.extend(both[:missing])
        if missing % 2:
            self._next_normal = both[-1]
        return np.array(out, dtype=np.float64) * std + mean

    def _normal_blocks(self, n, mean, std, np_dtype):
        """Many normals: n uniforms, then Box-Muller on each block of 16 (8 cos, 8 sin)."""
        data = self._unit(n, np_dtype).astype(np_dtype)
        for start in range(0, n - _FILL_BLOCK + 1, _FILL_BLOCK):
            _box_muller_block(data[start : start + _FILL_BLOCK], mean, std)
        if n % _FILL_BLOCK:  # the ragged end: torch redraws the last 16 and transforms them
            data[n - _FILL_BLOCK :] = self._unit(_FILL_BLOCK, np_dtype)
            _box_muller_block(data[n - _FILL_BLOCK :], mean, std)
        return data

    def integers(self, shape, low, high):
        """Integers in [low, high): low + word % (high - low), one word (two for wide ranges)."""
        n, span = math.prod(shape), high - low
        if span <= 0:
            raise RuntimeError(
                f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}"
            )
        words = self._words64(n) if span >= 1 << 32 else self._words(n)
        return ((words % np.uint64(span)).astype(np.int64) + low).reshape(shape)

    def permutation(self, n):
        """A random permutation of range(n), by torch's swaps: i with i + word % (n - i)."""
        order = np.arange(n, dtype=np.int64)
        words = self._words(max(n - 1, 0))
        for i in range(n - 1):
            j = i + int(words[i] % np.uint64(n - i))
            order[i], order[j] = order[j], order[i]
        return order

    def bernoulli(self, shape, p, np_dtype=np.float32):
        """1 with probability p, else 0: a float64 uniform below p."""
        return (self._unit(math.prod(shape), np.float64) < p).astype(np_dtype).reshape(shape)


def _box_muller_block(block, mean, std):
    """In place: uniforms u (16) become normals; the first 8 pair with the last 8."""
    radius = np.sqrt(-2 * np.log(1 - block[:8]))
    angle = 2 * np.pi * block[8:]
    block[:8], block[8:] = radius * np.cos(angle) * std + mean, radius * np.sin(angle) * std + mean


default_generator = Generator()


def manual_seed(seed):
    """Seed the default generator, as torch.manual_seed does; returns it."""
    return default_generator.manual_seed(seed)


def initial_seed():
    """The seed the default generator started from."""
    return default_generator.initial_seed()


def seed():
    """Seed the default generator from the operating system's entropy; returns the seed."""
    new_seed = int(np.random.SeedSequence().entropy) & ((1 << 63) - 1)
    default_generator.manual_seed(new_seed)
    return new_seed


def get_rng_state():
    """The default generator's state (an opaque object here, a ByteTensor in torch)."""
    return default_generator.get_state()


def set_rng_state(state):
    """Restore the default generator's state from get_rng_state."""
    default_generator.set_state(state)
