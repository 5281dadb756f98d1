# The sampling-tolerance rule of docs/testing.md, for the tests' jq filters
# (jq -L test/lib 'include "sampling"; ...').
#
# A share p estimated from n samples varies by about 2 sd, sd = sqrt(p(1-p)/n).
# A test asserts Z = 4 sd beyond the share it derived from first principles:
# one assertion then fails by chance with probability 3e-5, and the suite's
# sampled assertions (about 200 over both trees) together about once in 150
# runs.  The systematic part (start-up, libomp, a loop's own control lines)
# is not noise: each test derives it and says where it comes from.

def sampling_z: 4;

# The standard deviation of a share p (0..1) estimated from n samples.
def share_sd($p; $n): if $n > 0 then ($p * (1 - $p) / $n | sqrt) else 1 end;

# The lowest (highest) share, in percent, that an expected share of
# $pct percent allows from $n samples.
def share_floor($pct; $n): 100 * (($pct / 100) - sampling_z * share_sd($pct / 100; $n));
def share_ceil($pct; $n): 100 * (($pct / 100) + sampling_z * share_sd($pct / 100; $n));

# The lowest count a Poisson count of mean $lambda allows: lambda - Z sqrt(lambda).
def count_floor($lambda): $lambda - sampling_z * ($lambda | sqrt);
def count_ceil($lambda): $lambda + sampling_z * ($lambda | sqrt);

# The fewest samples for which an expected share $pct stays above $against
# percent (the answer the test must reject): n >= Z^2 p(1-p) / (p - a)^2.
def samples_needed($pct; $against):
    ($pct / 100) as $p | ($against / 100) as $a
    | if $p <= $a then infinite else (sampling_z * sampling_z * $p * (1 - $p) / (($p - $a) * ($p - $a)) | ceil) end;
