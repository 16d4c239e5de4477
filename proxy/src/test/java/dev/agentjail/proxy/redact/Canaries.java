package dev.agentjail.proxy.redact;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/** Synthetic canary secrets, one or more per catalog kind, generated from a fixed seed (never real keys). */
final class Canaries {
    /**
     * @param before text that must precede the secret for the rule to apply (a key name, a URL prefix)
     * @param secret the bytes that must be gone after redaction
     */
    record Canary(String kind, String before, String secret) {
        boolean multiLine() {
            return secret.indexOf('\n') >= 0;
        }

        @Override
        public String toString() {
            return kind;
        }
    }

    private static final String UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    private static final String LOWER = "abcdefghijklmnopqrstuvwxyz";
    private static final String DIGITS = "0123456789";
    static final String ALNUM = UPPER + LOWER + DIGITS;
    static final String URL = ALNUM + "_-";
    static final String HEX = "0123456789abcdef";
    private static final String B32 = UPPER + "234567";

    private final Random random;

    private Canaries(long seed) {
        random = new Random(seed);
    }

    String chars(String alphabet, int n) {
        StringBuilder s = new StringBuilder(n);
        for (int i = 0; i < n; i++) {
            s.append(alphabet.charAt(random.nextInt(alphabet.length())));
        }
        return s.toString();
    }

    static List<Canary> all() {
        Canaries g = new Canaries(20260701L);
        List<Canary> c = new ArrayList<>();
        c.add(new Canary("aws-access-key-id", "", "AKIA" + g.chars(B32, 16)));
        c.add(new Canary("aws-access-key-id", "", "ASIA" + g.chars(B32, 16)));
        c.add(new Canary("aws-access-key-id", "", "A3TX" + g.chars(B32, 16)));
        c.add(new Canary("aws-secret-access-key", "aws_secret_access_key = ", g.chars(ALNUM + "/", 40)));
        c.add(new Canary("aws-secret-access-key", "\"SecretAccessKey\": \"", g.chars(ALNUM, 40)));
        c.add(new Canary("aws-session-token", "AWS_SESSION_TOKEN=", "IQoJb3JpZ2lu" + g.chars(ALNUM, 300)));
        c.add(new Canary("aws-bedrock-api-key", "", "ABSK" + g.chars(ALNUM, 132)));
        c.add(new Canary("aws-bedrock-api-key", "", "bedrock-api-key-" + g.chars(ALNUM, 200)));
        c.add(new Canary("github-pat", "", "ghp_" + g.chars(ALNUM, 36)));
        c.add(new Canary("github-oauth-token", "", "gho_" + g.chars(ALNUM, 36)));
        c.add(new Canary("github-user-token", "", "ghu_" + g.chars(ALNUM, 36)));
        c.add(new Canary("github-app-token", "", "ghs_" + g.chars(ALNUM, 36)));
        c.add(new Canary("github-refresh-token", "", "ghr_" + g.chars(ALNUM, 36)));
        c.add(new Canary("github-fine-grained-pat", "", "github_pat_" + g.chars(ALNUM, 22) + "_" + g.chars(ALNUM, 59)));
        String[][] gitlab = {
            {"gitlab-pat", "glpat-"},
            {"gitlab-pipeline-trigger-token", "glptt-"},
            {"gitlab-runner-token", "glrt-"},
            {"gitlab-deploy-token", "gldt-"},
            {"gitlab-feed-token", "glft-"},
            {"gitlab-incoming-mail-token", "glimt-"},
            {"gitlab-agent-token", "glagent-"},
            {"gitlab-oauth-secret", "gloas-"},
            {"gitlab-scim-token", "glsoat-"},
            {"gitlab-ci-build-token", "glcbt-"},
            {"gitlab-feature-flag-token", "glffct-"},
        };
        for (String[] entry : gitlab) {
            c.add(new Canary(entry[0], "", entry[1] + g.chars(ALNUM, 20)));
        }
        c.add(new Canary("gitlab-pat", "", "glpat-" + g.chars(URL, 27) + "." + g.chars(LOWER + DIGITS, 9)));
        c.add(new Canary("gitlab-session", "_gitlab_session=", g.chars(HEX, 32)));
        c.add(new Canary(
                "slack-bot-token",
                "",
                "xoxb-" + g.chars(DIGITS, 11) + "-" + g.chars(DIGITS, 13) + "-" + g.chars(ALNUM, 24)));
        c.add(new Canary(
                "slack-user-token",
                "",
                "xoxp-" + g.chars(DIGITS, 11) + "-" + g.chars(DIGITS, 11) + "-" + g.chars(DIGITS, 13) + "-"
                        + g.chars(HEX, 32)));
        c.add(new Canary("slack-refresh-token", "", "xoxe-1-" + g.chars(ALNUM, 140)));
        c.add(new Canary("slack-config-token", "", "xoxe.xoxp-1-" + g.chars(ALNUM, 160)));
        c.add(new Canary(
                "slack-app-token",
                "",
                "xapp-1-A" + g.chars(UPPER + DIGITS, 10) + "-" + g.chars(DIGITS, 13) + "-" + g.chars(HEX, 64)));
        c.add(new Canary("slack-legacy-token", "", "xoxs-" + g.chars(DIGITS, 10) + "-" + g.chars(ALNUM, 30)));
        c.add(new Canary(
                "slack-webhook-url",
                "https://hooks.slack.com/services/",
                "T" + g.chars(UPPER + DIGITS, 8) + "/B" + g.chars(UPPER + DIGITS, 10) + "/" + g.chars(ALNUM, 24)));
        c.add(new Canary("stripe-secret-key", "", "sk_live_" + g.chars(ALNUM, 24)));
        c.add(new Canary("stripe-secret-key", "", "sk_test_" + g.chars(ALNUM, 99)));
        c.add(new Canary("stripe-restricted-key", "", "rk_prod_" + g.chars(ALNUM, 24)));
        c.add(new Canary("openai-api-key", "", "sk-" + g.chars(ALNUM, 20) + "T3BlbkFJ" + g.chars(ALNUM, 20)));
        c.add(new Canary("openai-api-key", "", "sk-proj-" + g.chars(URL, 74) + "T3BlbkFJ" + g.chars(URL, 74)));
        c.add(new Canary(
                "openai-service-account-key", "", "sk-svcacct-" + g.chars(URL, 58) + "T3BlbkFJ" + g.chars(URL, 58)));
        c.add(new Canary("openai-admin-key", "", "sk-admin-" + g.chars(URL, 58) + "T3BlbkFJ" + g.chars(URL, 58)));
        c.add(new Canary("anthropic-api-key", "", "sk-ant-api03-" + g.chars(URL, 93) + "AA"));
        c.add(new Canary("anthropic-admin-key", "", "sk-ant-admin01-" + g.chars(URL, 93) + "AA"));
        c.add(new Canary("anthropic-key", "", "sk-ant-oat01-" + g.chars(URL, 93) + "AA"));
        c.add(new Canary("google-api-key", "", "AIza" + g.chars(URL, 35)));
        c.add(new Canary("huggingface-token", "", "hf_" + g.chars(UPPER + LOWER, 34)));
        c.add(new Canary("huggingface-org-token", "", "api_org_" + g.chars(UPPER + LOWER, 34)));
        c.add(new Canary("npm-token", "", "npm_" + g.chars(LOWER + DIGITS, 36)));
        c.add(new Canary("pypi-token", "", "pypi-AgEIcHlwaS5vcmc" + g.chars(URL, 70)));
        c.add(new Canary("rubygems-api-key", "", "rubygems_" + g.chars(HEX, 48)));
        for (String label : new String[] {"RSA ", "EC ", "OPENSSH ", "ENCRYPTED ", ""}) {
            c.add(new Canary("private-key", "", pem(g, label + "PRIVATE KEY")));
        }
        c.add(new Canary("private-key", "", pem(g, "PGP PRIVATE KEY BLOCK")));
        c.add(new Canary("age-secret-key", "", "AGE-SECRET-KEY-1" + g.chars("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58)));
        c.add(new Canary("jwt", "", "eyJhbGciOiJIUzI1NiJ9.eyJ" + g.chars(URL, 60) + "." + g.chars(URL, 43)));
        c.add(new Canary("jwt", "", "eyJhbGciOiJub25lIn0.eyJzdWIiOiI" + g.chars(ALNUM, 20) + "."));
        c.add(new Canary("sendgrid-api-key", "", "SG." + g.chars(URL, 22) + "." + g.chars(URL, 43)));
        c.add(new Canary("twilio-api-key", "", "SK" + g.chars(HEX, 32)));
        c.add(new Canary("digitalocean-pat", "", "dop_v1_" + g.chars(HEX, 64)));
        c.add(new Canary("digitalocean-oauth-token", "", "doo_v1_" + g.chars(HEX, 64)));
        c.add(new Canary("digitalocean-refresh-token", "", "dor_v1_" + g.chars(HEX, 64)));
        c.add(new Canary("doppler-token", "", "dp.pt." + g.chars(ALNUM, 43)));
        c.add(new Canary("databricks-token", "", "dapi" + g.chars(HEX, 32)));
        c.add(new Canary("vault-service-token", "", "hvs." + g.chars(URL, 90)));
        c.add(new Canary("vault-batch-token", "", "hvb." + g.chars(URL, 138)));
        c.add(new Canary("shopify-access-token", "", "shpat_" + g.chars(HEX, 32)));
        c.add(new Canary("shopify-shared-secret", "", "shpss_" + g.chars(HEX, 32)));
        c.add(new Canary("shopify-custom-app-token", "", "shpca_" + g.chars(HEX, 32)));
        c.add(new Canary("shopify-private-app-token", "", "shppa_" + g.chars(HEX, 32)));
        c.add(new Canary("pulumi-token", "", "pul-" + g.chars(HEX, 40)));
        c.add(new Canary("linear-api-key", "", "lin_api_" + g.chars(ALNUM, 40)));
        c.add(new Canary("postman-api-key", "", "PMAK-" + g.chars(HEX, 24) + "-" + g.chars(HEX, 34)));
        c.add(new Canary("grafana-cloud-token", "", "glc_" + g.chars(ALNUM, 80)));
        c.add(new Canary("grafana-service-account-token", "", "glsa_" + g.chars(ALNUM, 32) + "_" + g.chars(HEX, 8)));
        c.add(new Canary("grafana-api-key", "", "eyJrIjoi" + g.chars(ALNUM, 70)));
        c.add(new Canary("sentry-org-token", "", "sntrys_eyJ" + g.chars(ALNUM, 120)));
        c.add(new Canary("sentry-user-token", "", "sntryu_" + g.chars(HEX, 64)));
        c.add(new Canary("heroku-api-key", "", "HRKU-AA" + g.chars(URL, 58)));
        c.add(new Canary("perplexity-api-key", "", "pplx-" + g.chars(ALNUM, 48)));
        c.add(new Canary("onepassword-service-account-token", "", "ops_eyJ" + g.chars(ALNUM, 250)));
        c.add(new Canary("flyio-token", "", "fo1_" + g.chars(URL, 43)));
        c.add(new Canary("flyio-token", "", "fm2_" + g.chars(ALNUM, 300)));
        c.add(new Canary("openshift-token", "", "sha256~" + g.chars(URL, 43)));
        c.add(new Canary(
                "azure-ad-client-secret",
                "",
                g.chars(ALNUM, 3) + "8Q~" + g.chars(ALNUM + "_~.-", 33).replaceAll("[-.~_]$", "x")));
        c.add(new Canary("mailgun-api-key", "", "key-" + g.chars(HEX, 32)));
        return c;
    }

    private static String pem(Canaries g, String label) {
        StringBuilder s = new StringBuilder("-----BEGIN " + label + "-----\n");
        for (int line = 0; line < 6; line++) {
            s.append(g.chars(ALNUM + "+/", 64)).append('\n');
        }
        s.append(g.chars(ALNUM, 20)).append("==\n");
        return s.append("-----END ").append(label).append("-----").toString();
    }

    /** Every window of {@code width} characters of the secret, skipping windows that span a line break. */
    static List<String> windows(String secret, int width) {
        List<String> result = new ArrayList<>();
        for (int i = 0; i + width <= secret.length(); i++) {
            String w = secret.substring(i, i + width);
            if (w.indexOf('\n') < 0) {
                result.add(w);
            }
        }
        return result;
    }
}
