#include "kingman/kernels/log_bessel_k.hpp"

#include <boost/math/constants/constants.hpp>
#include <boost/math/special_functions/gamma.hpp>
#include <boost/math/special_functions/sin_pi.hpp>
#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>

// Three branches (|nu| is used throughout, since K_{-nu} = K_nu):
//
// 1. |nu| >= 25: the uniform asymptotic expansion for large order (Olver; DLMF 10.41.4),
//      K_nu(nu x) ~ sqrt(pi / (2 nu)) e^{-nu eta} (1 + x^2)^{-1/4} sum_k (-1)^k u_k(t) / nu^k,
//      t = 1 / sqrt(1 + x^2),  eta = sqrt(1 + x^2) - asinh(1 / x),
//    taken in log form with u_1..u_12. It is uniform in x in (0, inf): at nu = 25 the first
//    omitted term is below 5e-16 relative for every z (checked against mpmath), and the error
//    only shrinks as nu grows. Rounding in the polynomials is below 3e-6 eps.
// 2. |nu| < 25, z <= 2: nu = n + mu with mu = nu - round(nu) in [-1/2, 1/2). Temme's series
//    (Temme 1975; Numerical Recipes' bessik; Boost's temme_ik) gives K_mu(z) and
//    K_{mu+1}(z) / K_mu(z); the gamma-function combinations use tgamma1pm1, which keeps them
//    accurate as mu -> 0. Kept as log K_mu and a ratio, it works down to z ~ 1e-300.
// 3. |nu| < 25, z > 2: Steed's algorithm for the continued fraction CF2 (Thompson & Barnett
//    1986) gives e^z K_mu(z) and the same ratio; the e^{-z} is applied in log space, so nothing
//    underflows at z = 1e5 or beyond. It needs fewer terms the larger z is.
// Branches 2 and 3 then climb from mu to nu with n <= 25 steps of the forward recurrence
// K_{v+1} = K_{v-1} + (2v/z) K_v, which is stable for K (the dominant solution), carried as the
// ratios r_v = K_{v+1}/K_v = 1/r_{v-1} + 2v/z >= 1 whose product is folded into the log
// before it can overflow.

namespace kingman::kernels {
namespace {

constexpr double kEpsilon = std::numeric_limits<double>::epsilon();
constexpr int kMaxSeriesTerms = 100000;

// log K_mu(z) and K_{mu+1}(z) / K_mu(z) for |mu| <= 1/2.
struct FractionalOrder {
  double log_k;
  double ratio;
};

// Temme's series, z <= 2.
FractionalOrder temme_series(double mu, double z) {
  const double gamma_plus_m1 = boost::math::tgamma1pm1(mu);    // Gamma(1 + mu) - 1
  const double gamma_minus_m1 = boost::math::tgamma1pm1(-mu);  // Gamma(1 - mu) - 1
  const double log_half_z = std::log(0.5 * z);
  const double sigma = -mu * log_half_z;
  // sin(pi mu) / (pi mu) and sinh(sigma) / sigma, both -> 1 at 0.
  const double sin_ratio =
      std::fabs(mu) < kEpsilon ? 1.0 : boost::math::sin_pi(mu) / (mu * std::numbers::pi);
  const double sinh_ratio = std::fabs(sigma) < kEpsilon ? 1.0 : std::sinh(sigma) / sigma;
  // gamma1 = (1/Gamma(1-mu) - 1/Gamma(1+mu)) / (2 mu), gamma2 = (1/Gamma(1-mu) + 1/Gamma(1+mu))/2,
  // written through Gamma(1+mu) Gamma(1-mu) = pi mu / sin(pi mu) to avoid the cancellation.
  const double gamma1 = std::fabs(mu) < kEpsilon
                            ? -boost::math::constants::euler<double>()
                            : (0.5 / mu) * (gamma_plus_m1 - gamma_minus_m1) * sin_ratio;
  const double gamma2 = 0.5 * (2.0 + gamma_plus_m1 + gamma_minus_m1) * sin_ratio;

  double p = 0.5 * (1.0 + gamma_plus_m1) * std::exp(sigma);    // Gamma(1+mu) (z/2)^-mu / 2
  double q = 0.5 * (1.0 + gamma_minus_m1) * std::exp(-sigma);  // Gamma(1-mu) (z/2)^mu / 2
  double f = (std::cosh(sigma) * gamma1 + sinh_ratio * (-log_half_z) * gamma2) / sin_ratio;
  double coefficient = 1.0;
  double sum = f;       // -> K_mu
  double sum_next = p;  // -> K_{mu+1} z / 2
  const double quarter_z2 = 0.25 * z * z;
  const double mu2 = mu * mu;
  for (int k = 1; k < kMaxSeriesTerms; ++k) {
    const double kd = k;
    f = (kd * f + p + q) / (kd * kd - mu2);
    p /= kd - mu;
    q /= kd + mu;
    coefficient *= quarter_z2 / kd;
    const double term = coefficient * f;
    const double term_next = coefficient * (p - kd * f);
    sum += term;
    sum_next += term_next;
    if (std::fabs(term) < std::fabs(sum) * kEpsilon &&
        std::fabs(term_next) < std::fabs(sum_next) * kEpsilon) {
      break;
    }
  }
  return {std::log(sum), (sum_next / sum) * (2.0 / z)};
}

// Steed's algorithm for CF2, z > 2 (any z > 1 converges; larger z converges faster).
FractionalOrder steed_continued_fraction(double mu, double z) {
  double a = mu * mu - 0.25;
  double b = 2.0 * (z + 1.0);
  double d = 1.0 / b;
  double fraction = d;  // the continued fraction z_1 / z_0
  double delta = d;
  double q_previous = 0.0;
  double q_current = 1.0;
  double c = -a;
  double q_sum = -a;
  double s = 1.0 + q_sum * delta;  // e^z K_mu(z) = sqrt(pi / 2z) / s
  for (int k = 2; k < kMaxSeriesTerms; ++k) {
    a -= 2.0 * (k - 1);
    b += 2.0;
    d = 1.0 / (b + a * d);
    delta *= b * d - 1.0;
    fraction += delta;
    const double q = (q_previous - (b - 2.0) * q_current) / a;
    q_previous = q_current;
    q_current = q;
    c *= -a / k;
    q_sum += c * q;
    s += q_sum * delta;
    // q can shrink towards underflow while c grows (z near 2, mu near 1/2): rescale both;
    // only the products c * q matter.
    if (std::fabs(q) < kEpsilon && q != 0.0) {
      c *= q;
      q_previous /= q;
      q_current /= q;
    }
    if (std::fabs(q_sum * delta) < std::fabs(s) * kEpsilon) break;
  }
  const double log_k = 0.5 * std::log(std::numbers::pi / (2.0 * z)) - z - std::log(s);
  const double ratio = (0.5 + mu + z + (mu * mu - 0.25) * fraction) / z;
  return {log_k, ratio};
}

// Coefficients of P_k, k = 1..12, with u_k(t) = t^k P_k(t^2), in increasing powers of t^2
// (generated by kernels/tools/make_bessel_table.py --debye-coefficients).
constexpr int kDebyeTerms = 12;
constexpr double kDebyeCoefficients[] = {
    0.125,
    -0.20833333333333334,
    0.0703125,
    -0.40104166666666669,
    0.3342013888888889,
    0.0732421875,
    -0.89121093750000002,
    1.8464626736111112,
    -1.0258125964506173,
    0.112152099609375,
    -2.3640869140624998,
    8.78912353515625,
    -11.207002616222994,
    4.6695844234262474,
    0.22710800170898438,
    -7.3687943594796321,
    42.534998745388457,
    -91.818241543240021,
    84.636217674600729,
    -28.212072558200244,
    0.57250142097473145,
    -26.491430486951554,
    218.19051174421159,
    -699.57962737613252,
    1059.9904525279999,
    -765.25246814118168,
    212.57013003921713,
    1.7277275025844574,
    -108.09091978839466,
    1200.9029132163525,
    -5305.646978613403,
    11655.393336864534,
    -13586.550006434138,
    8061.7221817373093,
    -1919.4576623184071,
    6.074042001273483,
    -493.915304773088,
    7109.5143024893641,
    -41192.65496889755,
    122200.46498301746,
    -203400.17728041555,
    192547.00123253153,
    -96980.598388637518,
    20204.291330966149,
    24.380529699556064,
    -2499.8304818112097,
    45218.768981362729,
    -331645.17248456361,
    1268365.2733216248,
    -2813563.2265865342,
    3763271.2976564039,
    -2998015.9185381066,
    1311763.6146629772,
    -242919.18790055133,
    110.01714026924674,
    -13886.08975371704,
    308186.40461266239,
    -2785618.1280864547,
    13288767.166421818,
    -37567176.660763353,
    66344512.274729028,
    -74105148.211532652,
    50952602.492664643,
    -19706819.118432228,
    3284469.8530720379,
    551.33589612202059,
    -84005.433603024081,
    2243768.1779224495,
    -24474062.72573873,
    142062907.79753309,
    -495889784.27503031,
    1106842816.8230145,
    -1621080552.1083372,
    1553596899.57058,
    -939462359.6815784,
    325573074.18576574,
    -49329253.66450996,
    3038.0905109223841,
    -549842.32757228869,
    17395107.553978164,
    -225105661.88941526,
    1559279864.8792574,
    -6563293792.6192846,
    17954213731.155602,
    -33026599749.800724,
    41280185579.753975,
    -34632043388.158775,
    18688207509.295826,
    -5866481492.0518475,
    814789096.11831212,
};

double debye_log_k(double nu, double z) {
  const double x = z / nu;
  const double root = std::hypot(1.0, x);  // sqrt(1 + x^2)
  const double t = 1.0 / root;
  const double eta = root - std::asinh(1.0 / x);
  const double t2 = t * t;
  const double w = -t / nu;
  double power = w;
  double tail = 0.0;  // sum_{k>=1} (-1)^k u_k(t) / nu^k
  int offset = 0;
  for (int k = 1; k <= kDebyeTerms; ++k) {
    double polynomial = kDebyeCoefficients[offset + k];
    for (int j = k - 1; j >= 0; --j) polynomial = polynomial * t2 + kDebyeCoefficients[offset + j];
    offset += k + 1;
    tail += power * polynomial;
    power *= w;
  }
  return 0.5 * std::log(std::numbers::pi / (2.0 * nu)) - nu * eta - 0.5 * std::log(root) +
         std::log1p(tail);
}

}  // namespace

double log_bessel_k(double nu, double z) {
  if (std::isnan(nu) || std::isnan(z)) return std::numeric_limits<double>::quiet_NaN();
  if (z < 0.0) throw std::domain_error("log_bessel_k: argument z must be >= 0");
  nu = std::fabs(nu);
  if (z == 0.0 || std::isinf(nu)) return std::numeric_limits<double>::infinity();
  if (std::isinf(z)) return -std::numeric_limits<double>::infinity();
  if (nu >= kLogBesselDebyeMinOrder) return debye_log_k(nu, z);

  const double steps = std::floor(nu + 0.5);
  const double mu = nu - steps;  // in [-1/2, 1/2)
  const FractionalOrder start =
      z <= kLogBesselSteedMinArgument ? temme_series(mu, z) : steed_continued_fraction(mu, z);
  double log_k = start.log_k;
  double ratio = start.ratio;  // K_{v+1} / K_v at v = mu + j
  double product = 1.0;        // product of ratios not yet folded into log_k
  const int n = static_cast<int>(steps);
  for (int j = 0; j < n; ++j) {
    if (ratio >= 1e100) {
      log_k += std::log(ratio);
    } else {
      product *= ratio;
      if (product >= 1e200) {
        log_k += std::log(product);
        product = 1.0;
      }
    }
    ratio = 1.0 / ratio + 2.0 * (mu + j + 1) / z;
  }
  return log_k + std::log(product);
}

}  // namespace kingman::kernels
