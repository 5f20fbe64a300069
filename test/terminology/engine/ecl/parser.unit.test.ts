// ECL parser: every construct (as its canonical text), the spec's syntax rules, errors with their position, and the
// limits (checked before work: a huge or deeply nested expression is a quick 400).
import { describe, expect, it } from 'vitest';
import { formatEcl, parseEcl, TerminologyError } from '../../../../src/terminology/engine/index.js';

const canon = (s: string): string => formatEcl(parseEcl(s));

function errorOf(s: string): TerminologyError {
  try {
    parseEcl(s, 'here');
  } catch (err) {
    expect(err).toBeInstanceOf(TerminologyError);
    const e = err as TerminologyError;
    expect(e.status).toBe(400);
    expect(e.issueCode).toBe('invalid');
    expect(e.expression).toEqual(['here']);
    return e;
  }
  throw new Error(`no error for ${s}`);
}

describe('ECL parser: constructs', () => {
  it.each([
    ['404684003', '404684003'],
    ['404684003 |Clinical finding|', '404684003'],
    ['  404684003|Clinical finding|  ', '404684003'],
    ['*', '*'],
    ['< 404684003', '<404684003'],
    ['<< 404684003 |Clinical finding|', '<<404684003'],
    ['<! 404684003', '<!404684003'],
    ['<<! 404684003', '<<!404684003'],
    ['> 40541001', '>40541001'],
    ['>> 40541001', '>>40541001'],
    ['>! 40541001', '>!40541001'],
    ['>>! 40541001', '>>!40541001'],
    ['^ 700043003 |Example problem list concepts reference set|', '^700043003'],
    ['< ^ 700043003', '<(^700043003)'],
    ['^ (< 900000000000455006)', '^(<900000000000455006)'],
    ['< 19829001 AND < 301867009', '(<19829001 AND <301867009)'],
    ['< 19829001 and < 301867009', '(<19829001 AND <301867009)'],
    ['< 19829001 , < 301867009', '(<19829001 AND <301867009)'],
    ['< 19829001 OR < 301867009 OR 1', '((<19829001 OR <301867009) OR 1)'],
    ['<< 19829001 MINUS << 301867009', '(<<19829001 MINUS <<301867009)'],
    ['(< 1 OR < 2) AND < 3', '((<1 OR <2) AND <3)'],
    ['<< (< 1 OR 2)', '<<(<1 OR 2)'],
    ['/* a comment */ < 1 /* and another */', '<1'],
    [
      '< 19829001 |Disorder of lung| : 116676008 |Associated morphology| = 79654002 |Edema|',
      '(<19829001:116676008=79654002)',
    ],
    ['< 19829001 : 116676008 = << 79654002', '(<19829001:116676008=(<<79654002))'],
    ['< 404684003 : << 363698007 = << 39057004', '(<404684003:<<363698007=(<<39057004))'],
    ['< 404684003 : 363698007 != << 39057004', '(<404684003:363698007!=(<<39057004))'],
    ['< 404684003 : 363698007 = (<< 1 OR << 2)', '(<404684003:363698007=(<<1 OR <<2))'],
    ['< 404684003 : 363698007 = *', '(<404684003:363698007=*)'],
    ['< 404684003 : * = 39057004', '(<404684003:*=39057004)'],
    [
      '< 404684003 : 363698007 = << 39057004, 116676008 = << 415582006',
      '(<404684003:(363698007=(<<39057004) AND 116676008=(<<415582006)))',
    ],
    ['< 404684003 : 363698007 = 1 OR 116676008 = 2', '(<404684003:(363698007=1 OR 116676008=2))'],
    [
      '< 404684003 : { 363698007 = << 39057004, 116676008 = << 415582006 }',
      '(<404684003:{(363698007=(<<39057004) AND 116676008=(<<415582006))})',
    ],
    ['< 404684003 : { 363698007 = 1 } OR { 116676008 = 2 }', '(<404684003:({363698007=1} OR {116676008=2}))'],
    ['< 373873005 : [1..3] 127489000 = < 105590001', '(<373873005:[1..3]127489000=(<105590001))'],
    ['< 373873005 : [0..*] 127489000 = *', '(<373873005:[0..*]127489000=*)'],
    ['< 373873005 : [0..0] 127489000 = *', '(<373873005:[0..0]127489000=*)'],
    [
      '< 373873005 : [1..1] { [1..*] 127489000 = < 105590001 }',
      '(<373873005:[1..1]{[1..*]127489000=(<105590001)})',
    ],
    ['< 105590001 : R 127489000 = 111', '(<105590001:R 127489000=111)'],
    [
      '< 404684003 : (363698007 = 1 OR 116676008 = 2), 246075003 = 3',
      '(<404684003:((363698007=1 OR 116676008=2) AND 246075003=3))',
    ],
    ['< 19829001 . 363698007', '(<19829001.363698007)'],
    ['< 404684003 : (<< 1 OR << 2) = 3', '(<404684003:(<<1 OR <<2)=3)'],
    ['< 404684003 : ( << 1 |a (| /* ) */ ) != 3', '(<404684003:<<1!=3)'],
    ['< 404684003 : { (1 OR 2) = 3, 4 = 5 }', '(<404684003:{((1 OR 2)=3 AND 4=5)})'],
    ['< 404684003 : ((1 OR 2) = 3)', '(<404684003:(1 OR 2)=3)'],
    ['(< 19829001 : 116676008 = 79654002) AND ^ 1', '((<19829001:116676008=79654002) AND ^1)'],
  ])('%s', (input, expected) => {
    expect(canon(input)).toBe(expected);
  });
});

describe('ECL parser: errors name the position and what was expected', () => {
  it.each([
    ['', 1, 'an expression constraint'],
    ['< ', 3, "a concept id, '*' or '('"],
    ['<< abc', 4, "a concept id, '*' or '('"],
    ['< 1 AND < 2 OR < 3', 13, 'may not be mixed'],
    ['< 1 MINUS < 2 MINUS < 3', 15, 'not associative'],
    ['(< 1 OR 2', 10, "')'"],
    ['< 1 )', 5, 'the end of the expression'],
    ['1 |unterminated', 3, "the end of the term ('|')"],
    ['< 1 : 2', 8, "'=' or '!='"],
    ['< 1 : 2 = 3, 4 = 5 OR 6 = 7', 20, 'may not be mixed'],
    ['< 1 : { 2 = 3', 14, "'}'"],
    ['< 1 : { { 2 = 3 } }', 9, 'groups do not nest'],
    ['< 1 : [2..1] 3 = 4', 11, 'a maximum of at least the minimum 2'],
    ['< 1 : [1.1] 3 = 4', 9, "'..'"],
    ['< 1 : [x..1] 3 = 4', 8, 'the minimum of the cardinality'],
    ['< 1 : 2 >= #5', 9, 'numeric comparisons are not supported'],
    ['< 1 : 2 = "x"', 11, 'concrete values are not supported'],
    ['< 1 {{ term = "x" }}', 5, 'ECL filters'],
    ['/* open comment', 1, "the end of the comment ('*/')"],
    ['1234567890123456789', 1, 'at most 18 digits'],
  ])('%s -> character %i', (input, position, expected) => {
    const e = errorOf(input);
    expect(e.message).toContain(`at character ${position}:`);
    expect(e.message).toContain(expected);
  });
});

describe('ECL parser: limits', () => {
  it('refuses a 1 MB expression before reading it (< 50 ms)', () => {
    const big = '< 1 OR '.repeat(150_000) + '1';
    const t0 = performance.now();
    const e = errorOf(big);
    expect(performance.now() - t0).toBeLessThan(50);
    expect(e.message).toMatch(/too long: \d+ characters, at most 65536/);
  });

  it('refuses a 10,000-deep nesting without recursing that deep (< 50 ms)', () => {
    const bomb = '('.repeat(10_000) + '1' + ')'.repeat(10_000);
    const t0 = performance.now();
    const e = errorOf(bomb);
    expect(performance.now() - t0).toBeLessThan(50);
    expect(e.message).toContain('nested too deeply: more than 50 levels');
  });

  it('refuses deep nesting in refinements, values and hierarchy operators too', () => {
    expect(errorOf('< 1 : ' + '('.repeat(60) + '2 = 3' + ')'.repeat(60)).message).toContain(
      'nested too deeply',
    );
    expect(errorOf('< 1 : 2 = ' + '<< ('.repeat(60) + '3' + ')'.repeat(60)).message).toContain(
      'nested too deeply',
    );
  });

  it('accepts 40 levels', () => {
    expect(canon('('.repeat(40) + '1' + ')'.repeat(40))).toBe('1');
  });

  it('refuses too many operators (a flat list under the length limit)', () => {
    const many = Array.from({ length: 3000 }, (_, i) => String(i + 1)).join(' OR ');
    expect(errorOf(many).message).toContain('too complex: more than 2000 operators');
  });
});
